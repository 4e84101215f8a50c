"""The type -> schema mapping of aim_core.api.crds, on small throwaway models."""

import datetime
import enum
from typing import Any, Literal

import attrs
import pytest
import yaml

from aim_core.api import crds
from aim_core.api.fields import field, optional, schema


class Colour(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


@schema(description="A GPU block.", cel=[("has(self.model) || has(self.count)", "say something")])
@attrs.define
class Gpu:
    model: str | None = optional(description="GPU model.", max_length=64)
    count: int | None = optional(minimum=0, format="int32")


@attrs.define
class Widget:
    name: str = field(description="Name.", min_length=1, immutable="name is immutable")
    gpu: Gpu | None = optional(description="Overrides the class description.", immutable="gpu is immutable")
    tags: list[str] | None = optional(max_items=3, pattern="^[a-z]+$")
    labels: dict[str, str] | None = optional()
    limits: dict[str, str | int] | None = optional(int_or_string=True)
    size: str | int | None = optional(int_or_string=True)
    blob: dict[str, Any] | None = optional(preserve_unknown=True)
    anything: Any = optional(preserve_unknown=True)
    mode: Literal["Shared", "Dedicated"] | None = optional(schema_default="Shared")
    colour: Colour | None = optional()
    phase: str | None = optional(enum=["Pending", "Ready"], schema_default="Pending")
    when: datetime.datetime | None = optional()
    ratio: float | None = optional(nullable=True)
    enabled: bool = field(default=False, schema_default=False)
    items_: list[Gpu] | None = optional(json_name="items", list_map_keys=("model",))
    old_thing: str | None = optional(deprecated=True)


@attrs.define
class WidgetRoot:
    spec: Widget
    status: Gpu | None = optional()
    metadata: dict[str, Any] | None = optional()


def test_attrs_class_becomes_object_with_camelcase_properties_and_required():
    node = crds.schema_for(Widget)
    assert node["type"] == "object"
    assert node["required"] == ["name"]
    assert {"name", "gpu", "tags", "labels", "items", "oldThing"} <= set(node["properties"])


def test_field_description_wins_over_class_description_and_rules_merge_in_order():
    gpu = crds.schema_for(Widget)["properties"]["gpu"]
    assert gpu["description"] == "Overrides the class description."
    assert gpu["x-kubernetes-validations"] == [
        {"rule": "has(self.model) || has(self.count)", "message": "say something"},
        {"rule": "self == oldSelf", "message": "gpu is immutable"},
    ]
    assert crds.schema_for(Gpu)["description"] == "A GPU block."
    assert gpu["properties"]["model"] == {"type": "string", "description": "GPU model.", "maxLength": 64}
    assert gpu["properties"]["count"] == {"type": "integer", "minimum": 0, "format": "int32"}


def test_lists_maps_and_value_constraints_on_items():
    p = crds.schema_for(Widget)["properties"]
    assert p["tags"] == {"type": "array", "maxItems": 3, "items": {"type": "string", "pattern": "^[a-z]+$"}}
    assert p["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert p["limits"]["additionalProperties"]["x-kubernetes-int-or-string"] is True
    assert p["items"]["x-kubernetes-list-type"] == "map"
    assert p["items"]["x-kubernetes-list-map-keys"] == ["model"]
    assert p["items"]["items"]["type"] == "object"


def test_int_or_string_and_free_form_json():
    p = crds.schema_for(Widget)["properties"]
    assert p["size"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    assert p["blob"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert p["anything"] == {"x-kubernetes-preserve-unknown-fields": True}


def test_enums_defaults_formats_nullable():
    p = crds.schema_for(Widget)["properties"]
    assert p["mode"] == {"type": "string", "enum": ["Shared", "Dedicated"], "default": "Shared"}
    assert p["colour"] == {"type": "string", "enum": ["red", "blue"]}
    assert p["phase"] == {"type": "string", "enum": ["Pending", "Ready"], "default": "Pending"}
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["ratio"] == {"type": "number", "nullable": True}
    assert p["enabled"] == {"type": "boolean", "default": False}
    assert p["name"]["x-kubernetes-validations"] == [{"rule": "self == oldSelf", "message": "name is immutable"}]


def test_unsupported_types_fail_loudly_with_the_field_path():
    @attrs.define
    class Bad:
        pair: tuple[int, str] = field()

    with pytest.raises(crds.SchemaError, match="Bad.pair"):
        crds.schema_for(Bad)

    @attrs.define
    class WrongMarker:
        name: str = field(int_or_string=True)

    with pytest.raises(crds.SchemaError, match="int_or_string"):
        crds.schema_for(WrongMarker)


def test_crd_envelope_names_scope_columns_and_root():
    doc = crds.crd(
        cls=WidgetRoot,
        kind="Widget",
        plural="widgets",
        singular="widget",
        scope="Namespaced",
        short_names=("wd",),
        categories=("aim", "all"),
        printer_columns=[{"name": "Wide", "type": "string", "json_path": ".status.model", "priority": 1}],
    )
    assert doc["metadata"]["name"] == "widgets.aim.eai.amd.com"
    assert doc["spec"]["names"] == {
        "kind": "Widget",
        "listKind": "WidgetList",
        "plural": "widgets",
        "singular": "widget",
        "shortNames": ["wd"],
        "categories": ["aim", "all"],
    }
    (version,) = doc["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"] == [
        {"name": "Wide", "type": "string", "jsonPath": ".status.model", "priority": 1}
    ]
    root = version["schema"]["openAPIV3Schema"]
    assert root["properties"]["metadata"] == {"type": "object"}
    assert set(root["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert "required" not in root


def test_render_yaml_is_deterministic_and_marked_generated():
    doc = crds.crd(cls=WidgetRoot, kind="Widget", plural="widgets", singular="widget", scope="Cluster")
    first = crds.render_yaml([doc])
    assert first == crds.render_yaml([doc])
    assert first.startswith("# Code generated")
    assert "python -m aim_core.api.crds --write" in first.splitlines()[1]
    assert list(yaml.safe_load_all(first)) == [doc]
