"""The product's import graph as Graphviz DOT: each app a cluster, each module folded to its first
`--depth` name parts (2: bingo.traditional.services, bingo.electronic, halls.cashier, ...), an edge per
folded pair
with the number of imports, function-local ones included (grimp, as import-linter reads them). An edge in
a circle would be drawn red; the contracts in pyproject.toml keep there being none.

    .venv/bin/python scripts/import_graph.py [--depth 2] | dot -Tsvg -o imports.svg
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import grimp

PRODUCT = ("halls", "jackpots", "bingo", "machines", "demo", "config")
COLOURS = {
    "halls": "#dbe9f6",
    "jackpots": "#fde2c8",
    "bingo": "#d8f0d2",
    "machines": "#eadcf4",
    "demo": "#eeeeee",
    "config": "#f6f0c8",
}


def folded(module: str, depth: int) -> str:
    return ".".join(module.split(".")[:depth])


def in_circles(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The edges that lie on a circle: both ends in one strongly connected component."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    component: dict[str, int] = {}

    def visit(node: str) -> None:  # Tarjan; the folded graph is small
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            while True:
                member = stack.pop()
                on.discard(member)
                component[member] = index[node]
                if member == node:
                    break

    for node in sorted({n for edge in edges for n in edge}):
        if node not in index:
            visit(node)
    return {(a, b) for a, b in edges if component[a] == component[b]}


def dot(depth: int) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    graph = grimp.build_graph(*PRODUCT)
    weights: Counter[tuple[str, str]] = Counter()
    nodes: set[str] = set()
    for module in graph.modules:
        source = folded(module, depth)
        nodes.add(source)
        for imported in graph.find_modules_directly_imported_by(module):
            target = folded(imported, depth)
            if target != source:
                weights[(source, target)] += 1
    red = in_circles(set(weights))
    lines = [
        "digraph imports {",
        '  graph [rankdir=LR, fontname="Helvetica", fontsize=20, nodesep=0.12, ranksep=1.6, labelloc=t,',
        f"    label=\"The product's imports, modules folded to {depth} name parts: "
        f'{len(red)} edge(s) in a circle (red)"];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        '  edge [color="#7f7f7f80", arrowsize=0.5];',
    ]
    for app in PRODUCT:
        lines.append(f'  subgraph "cluster_{app}" {{')
        lines.append(f'    label="{app}"; style="rounded"; color="#999999";')
        for node in sorted(n for n in nodes if n.split(".")[0] == app):
            lines.append(f'    "{node}" [fillcolor="{COLOURS[app]}"];')
        lines.append("  }")
    for (a, b), count in sorted(weights.items()):
        style = ', color="red", penwidth=2' if (a, b) in red else ""
        lines.append(f'  "{a}" -> "{b}" [tooltip="{count} imports"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=2, help="name parts each module is folded to")
    args = parser.parse_args()
    sys.stdout.write(dot(args.depth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
