"""The import graph: data flows one way (source -> parse -> score -> load -> metrics -> planning -> publish), the flows wire the
stages, the commands sit on top, and the runtime machinery and the warehouse (storage only) sit below every stage.
No module imports a later layer, lazily or not, and no two modules import each other, even through others."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mlperf_scaling"

# lowest first; a module may import its own layer and the ones before it
LAYERS = [
    ("base", ["mlperf_scaling", "mlperf_scaling.rounds", "mlperf_scaling.failures", "mlperf_scaling.settings",
              "mlperf_scaling.contracts", "mlperf_scaling.reference"]),
    ("runtime", ["mlperf_scaling.runtime"]),
    ("warehouse", ["mlperf_scaling.warehouse"]),
    ("source", ["mlperf_scaling.tasks.source"]),
    ("parse", ["mlperf_scaling.tasks.parse"]),
    ("score", ["mlperf_scaling.tasks.score"]),
    ("load", ["mlperf_scaling.tasks.load"]),
    ("metrics", ["mlperf_scaling.tasks.metrics"]),
    ("planning", ["mlperf_scaling.tasks.planning"]),
    ("publish", ["mlperf_scaling.tasks.publish"]),
    ("flows", ["mlperf_scaling.flows"]),
    ("commands", ["mlperf_scaling.cli", "mlperf_scaling.command_options", "mlperf_scaling.warehouse_commands", "mlperf_scaling.serve_commands", "mlperf_scaling.arguments", "mlperf_scaling.plan_command", "mlperf_scaling.model_plan_command", "mlperf_scaling.terminal", "mlperf_scaling.fast_path"]),
]


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_name(path): path for path in PACKAGE.rglob("*.py")}


def _layer(module: str) -> tuple[int, str] | None:
    found = [(len(prefix), rank, name) for rank, (name, prefixes) in enumerate(LAYERS) for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    return (max(found)[1], max(found)[2]) if found else None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports anywhere in its body (inside functions too)."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mlperf_scaling"):
                names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.startswith("mlperf_scaling")]
            graph[module].update(name for name in names if name in modules and name != module)
    return graph


def test_every_module_has_a_layer():
    assert [module for module in _modules() if _layer(module) is None] == []


def test_no_module_imports_a_later_layer():
    wrong = [f"{module} ({_layer(module)[1]}) imports {imported} ({_layer(imported)[1]})"
             for module, imports in import_graph().items() for imported in sorted(imports)
             if _layer(imported)[0] > _layer(module)[0]]
    assert wrong == []


def test_no_import_cycle():
    graph = import_graph()
    seen: dict[str, int] = {}
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        seen[module] = 1
        for imported in sorted(graph.get(module, ())):
            if seen.get(imported) == 1:
                cycles.append(path[path.index(imported):] + [imported])
            elif imported not in seen:
                visit(imported, [*path, imported])
        seen[module] = 2

    for module in sorted(graph):
        if module not in seen:
            visit(module, [module])
    assert cycles == []


def test_the_graph_holds_imports_inside_functions_too():
    graph = import_graph()
    # trend_plots.plot_trends imports the dispatcher inside the function; predict imports the score stage's rules at the top
    assert "mlperf_scaling.runtime.dispatch" in graph["mlperf_scaling.tasks.publish.trend_plots"]
    assert "mlperf_scaling.tasks.score.rules" in graph["mlperf_scaling.tasks.planning.predict"]
    assert _layer("mlperf_scaling.tasks.planning.predict")[0] > _layer("mlperf_scaling.tasks.score.rules")[0]
    assert _layer("mlperf_scaling.runtime.pools")[1] == "runtime" and _layer("mlperf_scaling.tasks.load.steps")[1] == "load"
