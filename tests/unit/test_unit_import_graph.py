"""No import cycle in hippod and hippoctl: each layer imports only the ones below it.

grimp reads the source, so imports under TYPE_CHECKING and inside functions count as much as those at
the top of a module: a cycle through a lazy import is a cycle in the design all the same.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("hippod", "hippoctl")
# A cycle of at most this many modules is shown with the import lines that make it.
SHORT = 6


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's, without recursion:
    the graph has hundreds of modules), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, following = work[-1]
            step = next(following, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    """A cycle's modules; for a short one, each import line between them."""
    lines = [f"a cycle of {len(component)} modules: {', '.join(component)}"]
    if len(component) <= SHORT:
        members = set(component)
        for importer in component:
            for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    lines.append(f"  {importer}:{detail['line_number']}: {detail['line_contents']}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The import graph of the source as it stands (no cache: it would be the graph of before)."""
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_the_finder_sees_a_cycle() -> None:
    made = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        made.add_module(module)
    made.add_import(importer="a.b", imported="a.c", line_number=3, line_contents="from a import c")
    made.add_import(importer="a.c", imported="a.b", line_number=5, line_contents="from a import b")
    made.add_import(importer="a.d", imported="a.b", line_number=1, line_contents="from a import b")
    [component] = strongly_connected(made)
    assert component == ["a.b", "a.c"]
    assert describe(made, component).splitlines() == [
        "a cycle of 2 modules: a.b, a.c",
        "  a.b:3: from a import c",
        "  a.c:5: from a import b",
    ]


def test_no_import_cycle(graph: grimp.ImportGraph) -> None:
    assert "hippod.daemon.app" in graph.modules and "hippoctl.cli" in graph.modules
    cycles = strongly_connected(graph)
    assert not cycles, "\n".join(describe(graph, c) for c in cycles)


def test_the_client_imports_nothing_of_the_daemon(graph: grimp.ImportGraph) -> None:
    crossing = sorted(
        f"{importer} -> {imported}"
        for importer in graph.modules
        if importer.split(".")[0] == "hippoctl"
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] == "hippod"
    )
    assert not crossing, "\n".join(crossing)
