"""PRISM MDPs for the Markov engine's benchmarks (``bench/bench_mdp.py``) and its Storm comparisons, written
from the published descriptions of the protocols (no case-study file is copied).

* :func:`consensus_prism`: the randomised consensus protocol of Aspnes and Herlihy with a shared coin
  (the ``coin`` models of PRISM's case studies, [KNS01]): ``N`` processes share a counter that starts in
  the middle of ``[0, 2(K+1)N]``; each process repeatedly flips a fair coin, moves the counter up on heads
  and down on tails, then reads it: at or below ``N`` it decides tails (0), at or above ``2(K+1)N − N``
  heads (1), else it flips again. The scheduler interleaves the processes (nondeterminism).
* :func:`root_contention_prism`: the root contention phase of IEEE 1394 (FireWire) with digital clocks
  and a deadline, after Stoelinga's description ([KNS03]): two nodes each pick a fast or a slow waiting
  time with probability 1/2, wait (the scheduler picks when within the interval), then send a parent
  request over a wire with a delay of at most ``delay``; a node that receives the other's request while
  waiting becomes the child (a leader is elected), two requests that cross make both start again. Time
  advances in unit ticks, counted up to the deadline ``D + 1``.

Labels: ``finished`` (every process decided), ``all_heads`` (and every coin is heads), ``agree`` (all
decided the same); ``elected`` and ``in_time`` (``t <= D``).
"""

from __future__ import annotations


def consensus_prism(processes: int, k: int) -> str:
    """The shared-coin consensus protocol for ``processes`` processes and barrier parameter ``k``."""
    if processes < 1 or k < 1:
        raise ValueError("need at least one process and k >= 1")
    n = processes
    top = 2 * (k + 1) * n
    lines = ["mdp", "", f"global counter : [0..{top}] init {(k + 1) * n};", ""]
    for i in range(1, n + 1):
        lines += [
            f"module process{i}",
            f"  pc{i} : [0..3] init 0;  // 0 flip, 1 move the counter, 2 read it, 3 decided",
            f"  coin{i} : [0..1] init 0;",
            f"  [] pc{i}=0 -> 0.5:(coin{i}'=0)&(pc{i}'=1) + 0.5:(coin{i}'=1)&(pc{i}'=1);",
            f"  [] pc{i}=1 & coin{i}=0 & counter>0 -> (counter'=counter-1)&(pc{i}'=2)&(coin{i}'=0);",
            f"  [] pc{i}=1 & coin{i}=1 & counter<{top} -> (counter'=counter+1)&(pc{i}'=2)&(coin{i}'=0);",
            f"  [] pc{i}=2 & counter<={n} -> (pc{i}'=3)&(coin{i}'=0);",
            f"  [] pc{i}=2 & counter>={top - n} -> (pc{i}'=3)&(coin{i}'=1);",
            f"  [] pc{i}=2 & counter>{n} & counter<{top - n} -> (pc{i}'=0);",
            f"  [done] pc{i}=3 -> true;",
            "endmodule", ""]
    every = " & ".join(f"pc{i}=3" for i in range(1, n + 1))
    heads = " & ".join(f"coin{i}=1" for i in range(1, n + 1))
    tails = " & ".join(f"coin{i}=0" for i in range(1, n + 1))
    lines += [f'label "finished" = {every};', f'label "all_heads" = {every} & {heads};',
              f'label "agree" = {every} & (({heads}) | ({tails}));', ""]
    return "\n".join(lines)


def root_contention_prism(deadline: int, delay: int = 3, fast: tuple[int, int] = (7, 8),
                          slow: tuple[int, int] = (15, 16)) -> str:
    """Root contention of two FireWire nodes with a wire ``delay``, waiting intervals ``fast`` and
    ``slow`` (in ticks) and time counted up to ``deadline + 1``."""
    if deadline < 1 or delay < 1 or not 0 < fast[0] <= fast[1] or not 0 < slow[0] <= slow[1]:
        raise ValueError("need a positive deadline, delay and waiting intervals")
    hi = max(fast[1], slow[1])
    # a request on the wire (m = 1) is delivered (m = 2) at the latest ``delay`` ticks after it was sent;
    # the wires are global: the receiver takes a delivered request off its wire
    lines = ["mdp", "", "global m1 : [0..2] init 0;", "global m2 : [0..2] init 0;", ""]
    for i, j in ((1, 2), (2, 1)):
        lo_i, hi_i = f"(slow{i} ? {slow[0]} : {fast[0]})", f"(slow{i} ? {slow[1]} : {fast[1]})"
        lines += [
            f"module node{i}",
            f"  s{i} : [0..3] init 0;  // 0 pick a waiting time, 1 wait, 2 request sent, 3 child",
            f"  slow{i} : bool init false;",
            f"  x{i} : [0..{hi}] init 0;  // time waited",
            f"  w{i} : [0..{delay}] init 0;  // age of this node's request on the wire",
            f"  [] s{i}=0 & s{j}!=3 -> 0.5:(s{i}'=1)&(slow{i}'=false)&(x{i}'=0)"
            f" + 0.5:(s{i}'=1)&(slow{i}'=true)&(x{i}'=0);",
            f"  [] s{i}=1 & m{j}!=2 & m{i}=0 & x{i}>={lo_i} -> (s{i}'=2)&(m{i}'=1)&(w{i}'=0)&(x{i}'=0);",
            f"  [] m{i}=1 -> (m{i}'=2)&(w{i}'=0);",
            f"  [] s{i}=1 & m{j}=2 -> (s{i}'=3)&(m{j}'=0)&(x{i}'=0);",
            f"  [] s{i}=2 & m{j}=2 -> (s{i}'=0)&(m{j}'=0);",
            f"  [tick] s{i}!=0 & m{j}!=2 & (s{i}=1 => x{i}<{hi_i}) & (m{i}=1 => w{i}<{delay})"
            f" -> (x{i}'=(s{i}=1 ? x{i}+1 : 0))&(w{i}'=(m{i}=1 ? w{i}+1 : 0));",
            "endmodule", ""]
    lines += ["module clock",
              f"  t : [0..{deadline + 1}] init 0;",
              f"  [tick] s1!=3 & s2!=3 -> (t'=min(t+1, {deadline + 1}));",
              "  [] s1=3 | s2=3 -> true;",
              "endmodule", "",
              'label "elected" = s1=3 | s2=3;', f'label "in_time" = t<={deadline};', ""]
    return "\n".join(lines)
