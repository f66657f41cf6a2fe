"""AlterAtOnce (halls.migration_ops): a labels migration wrapped in it leaves the migration state exactly as
its operations one by one would, rendered models included, and refuses what it could not apply at once."""

from __future__ import annotations

import pytest
from django.db import migrations, models
from django.db.migrations.loader import MigrationLoader

from halls.migration_ops import AlterAtOnce

LABELS = ("halls", "0010_verbose_names")


def before_labels() -> tuple[MigrationLoader, migrations.Migration]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return loader, loader.get_migration(*LABELS)


def test_the_state_is_the_one_the_operations_give_one_by_one() -> None:
    loader, migration = before_labels()
    (wrapped,) = migration.operations
    assert isinstance(wrapped, AlterAtOnce)
    at_once = loader.project_state(migration.dependencies[:1], at_end=True)  # halls 0009's state
    one_by_one = at_once.clone()
    at_once.apps  # rendered: the reloads are the path under test  # noqa: B018
    one_by_one.apps  # noqa: B018

    wrapped.state_forwards("halls", at_once)
    for operation in wrapped.operations:
        operation.state_forwards("halls", one_by_one)

    assert at_once.models == one_by_one.models
    for key in one_by_one.models:
        rendered, expected = at_once.apps.get_model(*key), one_by_one.apps.get_model(*key)
        assert rendered._meta.verbose_name == expected._meta.verbose_name
        assert [f.verbose_name for f in rendered._meta.fields] == [
            f.verbose_name for f in expected._meta.fields
        ]
    venue = at_once.apps.get_model("halls", "Room")._meta.get_field("venue").related_model
    assert venue is at_once.apps.get_model("halls", "Venue")  # the relations point at the re-rendered models


def test_a_field_altered_twice_or_another_operation_is_refused() -> None:
    field = migrations.AlterField(model_name="venue", name="name", field=models.CharField(max_length=5))
    with pytest.raises(ValueError, match="twice"):
        AlterAtOnce([field, field])
    with pytest.raises(TypeError):
        AlterAtOnce([migrations.RemoveField(model_name="venue", name="name")])  # type: ignore[list-item]
