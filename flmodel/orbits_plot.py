"""A plot of a contact plan's windows: one row per link, a bar per pass, round boundaries marked.

Returns a matplotlib ``Figure`` built without pyplot (no global state; saving picks the Agg canvas
from the file extension). Writing the file is the caller's business.
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from flmodel.orbits import ContactPlan, Node, default_naming


def plot_contact_windows(
    plan: ContactPlan,
    naming: Callable[[Node], str] | None = None,
    *,
    title: str | None = None,
) -> Figure:
    """A Gantt-style chart of ``plan``: for each link the sampled passes (from the first to one
    sample after the last up sample), in minutes from the epoch; shaded alternate rounds."""
    name = naming or default_naming(len(plan.stations))
    sampling = plan.sampling
    height = max(2.5, 0.28 * len(plan.links) + 1.2)
    figure = Figure(figsize=(9.0, height))
    axes = figure.add_subplot()
    for round_index in range(0, sampling.rounds, 2):
        start = round_index * sampling.round_seconds / 60.0
        axes.axvspan(start, start + sampling.round_seconds / 60.0, color="0.93", zorder=0)
    for row, link in enumerate(plan.links):
        bars = [
            (first / 60.0, (last - first + sampling.sample_seconds) / 60.0) for first, last in link.passes
        ]
        colour = "tab:blue" if link.ends[1].kind == "station" else "tab:orange"
        axes.broken_barh(bars, (row - 0.35, 0.7), facecolors=colour)
    axes.set_yticks(range(len(plan.links)))
    axes.set_yticklabels([f"{name(link.ends[0])} – {name(link.ends[1])}" for link in plan.links], fontsize=7)
    axes.set_ylim(len(plan.links) - 0.5, -0.5)
    axes.set_xlim(0.0, sampling.duration_seconds / 60.0)
    axes.set_xlabel(
        f"minutes from {plan.epoch.isoformat()} (shaded: alternate rounds of {sampling.round_seconds:g} s)"
    )
    axes.set_title(
        title or f"contact windows: {len(plan.satellite_names)} satellites, {len(plan.stations)} "
                 f"station{'' if len(plan.stations) == 1 else 's'}"
    )
    figure.tight_layout()
    return figure
