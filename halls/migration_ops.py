"""Migration operations of the house.

`AlterAtOnce` wraps a migration's many `AlterField` / `AlterModelOptions` (the labels migrations: verbose
names, help texts) so that the migration state re-renders the related models once for them all, not once
each. Django re-renders every model related to an altered one after each operation (every model pointing at
the venue, for most of ours): the 630 label alterations made a fresh `migrate` spend half its time, about two
minutes, rendering models, in every test database, every installation's template and every demo.

The database sees exactly what the wrapped operations do (each one's own `database_forwards`, usually
nothing: a label is not a column), and the final state is the same: `makemigrations --check` holds it.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState

Alteration = migrations.AlterField | migrations.AlterModelOptions


class AlterAtOnce(Operation):
    """Field and model-option alterations of one app, each of a different field or model, applied together."""

    reduces_to_sql = False
    reversible = True

    def __init__(self, operations: list[Alteration]) -> None:
        targets = [_target(op) for op in operations]
        if len(set(targets)) != len(targets):  # applied against one state: no target may be altered twice
            raise ValueError("AlterAtOnce: a field or a model's options altered twice")
        if not all(isinstance(op, migrations.AlterField | migrations.AlterModelOptions) for op in operations):
            raise TypeError("AlterAtOnce takes AlterField and AlterModelOptions only")
        self.operations = list(operations)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return self.__class__.__qualname__, [self.operations], {}

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        # Each operation changes the model states as Django does; the reloads it asks for are gathered and
        # done once at the end (an instance attribute shadows the method meanwhile).
        asked: dict[tuple[str, str], bool] = {}

        def gather(app: str, model: str, delay: bool = False) -> None:
            asked[app, model] = asked.get((app, model), True) and delay

        setattr(state, "reload_model", gather)  # noqa: B010 (an instance attribute over the method)
        try:
            for operation in self.operations:
                operation.state_forwards(app_label, state)
        finally:
            delattr(state, "reload_model")
        delayed = [key for key, delay in asked.items() if delay]
        eager = [key for key, delay in asked.items() if not delay]
        state.reload_models(delayed, delay=True)
        state.reload_models(eager, delay=False)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: ProjectState, to_state: ProjectState
    ) -> None:
        for operation in self.operations:  # each target once, so the whole batch's states serve each
            operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: ProjectState, to_state: ProjectState
    ) -> None:
        for operation in reversed(self.operations):
            operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Alter {len(self.operations)} fields and model options at once"

    @property
    def migration_name_fragment(self) -> str:
        return "alter_at_once"


def _target(operation: Alteration) -> tuple[str, str]:
    """(model, field) of an AlterField; (model, "") of an AlterModelOptions."""
    if isinstance(operation, migrations.AlterField):
        return operation.model_name_lower, operation.name
    return operation.name_lower, ""
