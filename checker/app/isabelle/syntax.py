r"""Syntax check of the Isabelle theories that ``flcheck export isabelle`` writes.

flcheck has no Isabelle at hand, so an export is checked here as far as syntax goes (it is NOT
proof-checked): every ``.thy`` file and the ``ROOT`` file must

1. parse with the grammar ``spec/grammar/isabelle_subset.lark`` (outer syntax, and every quoted term or
   type with the inner-syntax start symbols ``term`` / ``type``);
2. have balanced parentheses, brackets, braces, ``\<lbrakk>``/``\<rbrakk>``, cartouches, comments and
   quotes (checked on the raw text, independently of the grammar);
3. use well-formed names: the theory name equals the file name and is an identifier, no constant, type or
   fact is declared twice, and no declaration silently shadows a constant of Isabelle's ``Main`` (the
   one intended exception, ``partition``, is listed in ``INTENDED_SHADOWS``);
4. define every referenced constant before use: a name in a term must be bound in the term (``\<lambda>``,
   quantifiers, big operators, set comprehension, ``let``), a parameter of the definition, locale or
   statement that encloses it, a constant declared earlier in the theory or in an imported exported
   theory, or one of the ``Main`` constants in ``MAIN_CONSTANTS``. Types likewise
   (``MAIN_TYPES``), and the facts and methods that proofs cite (``MAIN_FACTS``, ``MAIN_METHODS``). In
   inductive rules and short-form lemmas, where free variables are implicitly universally quantified, a
   name that is no constant is a variable and must occur at least twice (a name that occurs once is
   almost always a misspelt constant) unless declared with ``fixes``.

Items 1 and 2 are :mod:`.syntax_parse`, items 3 and 4 :mod:`.syntax_declarations` (which holds the
lists of ``Main`` names). The lists are explicit: they are exactly the HOL constants, types, facts and
proof methods the exporter uses, so a name outside them is a mistake of the exporter, not a gap of the
check.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import lark
from lark import Token, Tree

from checker.app.isabelle.syntax_declarations import TheoryChecker, TheoryInterface
from checker.app.isabelle.syntax_parse import SyntaxIssue, check_balance, parse


def check_theory(
    text: str,
    file: str,
    imported: Iterable[TheoryInterface] = (),
) -> tuple[TheoryInterface | None, list[SyntaxIssue]]:
    """Check one theory file's text (``file`` is its name, e.g. ``Moniteo.thy``; the theory name must be
    its stem). ``imported`` are the interfaces of exported theories it may import. Returns the theory's
    interface (``None`` if it does not parse) and the issues found, sorted by position."""
    issues = check_balance(text, file)
    for m in re.finditer(r"[^\x00-\x7f]", text):
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        issues.append(SyntaxIssue(file, line, col, f"non-ASCII character {m.group()!r} (write Isabelle "
                                  "symbols as \\<name>)"))
    try:
        tree = parse(text, "theory_file")
    except lark.exceptions.UnexpectedInput as exc:
        line = getattr(exc, "line", 1) or 1
        col = getattr(exc, "column", 1) or 1
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        issues.append(SyntaxIssue(file, line, col, f"syntax error: {first}"))
        return None, sorted(issues)
    imported = list(imported)
    by_name = {th.name: th for th in imported}
    imports = [c for c in tree.children if isinstance(c, Tree) and c.data == "import_name"]
    visible: list[TheoryInterface] = []
    for imp in imports:
        iname = str(imp.children[0]).strip('"')
        if iname in ("Main", "Complex_Main"):
            continue
        if iname not in by_name:
            issues.append(SyntaxIssue(file, imp.meta.line, imp.meta.column,
                                      f"imported theory {iname!r} is not part of the export"))
            continue
        visible.append(by_name[iname])
    checker = TheoryChecker(text, file, visible)
    stem = Path(file).stem
    interface = checker.run(tree, stem)
    return interface, sorted(issues + checker.issues)


def check_root(text: str, theory_names: Iterable[str], file: str = "ROOT") -> list[SyntaxIssue]:
    """Check a ROOT file: it parses, and its sessions list exactly the given theories (each once)."""
    issues = check_balance(text, file)
    try:
        tree = parse(text, "root_file")
    except lark.exceptions.UnexpectedInput as exc:
        line = getattr(exc, "line", 1) or 1
        col = getattr(exc, "column", 1) or 1
        issues.append(SyntaxIssue(file, line, col, f"syntax error: {str(exc).splitlines()[0]}"))
        return sorted(issues)
    listed: list[Token] = []
    for sess in tree.children:
        kids = [k for k in sess.children if isinstance(k, Token)]
        # session NAME = PARENT + ... theories T*
        listed.extend(kids[2:])
        if str(kids[1]).strip('"') not in ("HOL",):
            issues.append(SyntaxIssue(file, kids[1].line or 1, kids[1].column or 1,
                                      f"parent session {kids[1]!s} is not HOL"))
    names = [str(t).strip('"') for t in listed]
    wanted = sorted(set(theory_names))
    for t, n in zip(listed, names, strict=True):
        if n not in wanted:
            issues.append(SyntaxIssue(file, t.line or 1, t.column or 1, f"theory {n!r} has no .thy file"))
    for n, c in Counter(names).items():
        if c > 1:
            issues.append(SyntaxIssue(file, 1, 1, f"theory {n!r} listed {c} times"))
    for n in wanted:
        if n not in names:
            issues.append(SyntaxIssue(file, 1, 1, f"theory {n!r} is not listed in the ROOT file"))
    return sorted(issues)


def import_order(texts: Mapping[str, str]) -> list[str]:
    """Theory names (file stems) in an order where each comes after the exported theories it imports;
    raises ``ValueError`` on a cycle."""
    deps: dict[str, list[str]] = {}
    for name, text in texts.items():
        m = re.search(r"\bimports\b(.*?)\bbegin\b", text, re.S)
        found = re.findall(r'"?([A-Za-z][A-Za-z0-9_.-]*)"?', m.group(1)) if m else []
        deps[name] = sorted(d for d in found if d in texts)
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str) -> None:
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            raise ValueError(f"import cycle through theory {n!r}")
        state[n] = 1
        for d in deps[n]:
            visit(d)
        state[n] = 2
        order.append(n)

    for n in sorted(texts):
        visit(n)
    return order


def check_export_texts(files: Mapping[str, str]) -> list[SyntaxIssue]:
    """Check a whole export given as ``{file name: text}`` (``*.thy`` files and ``ROOT``)."""
    thys = {Path(f).stem: t for f, t in files.items() if f.endswith(".thy")}
    issues: list[SyntaxIssue] = []
    try:
        order = import_order(thys)
    except ValueError as exc:
        return [SyntaxIssue("ROOT", 1, 1, str(exc))]
    interfaces: dict[str, TheoryInterface] = {}
    failed: set[str] = set()
    for name in order:
        broken = sorted(d for d in failed if re.search(rf"\bimports\b[^\n]*\b{re.escape(d)}\b", thys[name]))
        if broken:  # do not cascade: report the broken import once
            issues.append(SyntaxIssue(f"{name}.thy", 1, 1, f"not checked: imported theory {broken[0]!r} "
                                      "does not parse"))
            failed.add(name)
            continue
        iface, found = check_theory(thys[name], f"{name}.thy", interfaces.values())
        issues.extend(found)
        if iface is not None:
            interfaces[name] = iface
        else:
            failed.add(name)
    if "ROOT" in files:
        issues.extend(check_root(files["ROOT"], thys))
    else:
        issues.append(SyntaxIssue("ROOT", 1, 1, "the export has no ROOT file"))
    return sorted(issues)


def check_export_dir(directory: str | Path) -> list[SyntaxIssue]:
    """Check every ``.thy`` file and the ``ROOT`` file of an export directory."""
    d = Path(directory)
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(d.glob("*.thy"))}
    root = d / "ROOT"
    if root.exists():
        files["ROOT"] = root.read_text(encoding="utf-8")
    return check_export_texts(files)
