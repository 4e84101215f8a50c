"""Registry of the twelve top-level AIM kinds and their CRD naming facts."""

import attrs

from aim_core.api.artifact import AIMArtifact
from aim_core.api.benchmark import AIMBenchmark
from aim_core.api.benchmarksweep import AIMBenchmarkSweep
from aim_core.api.cache import AIMTemplateCache
from aim_core.api.common import API_GROUP, API_VERSION
from aim_core.api.model import AIMClusterModel, AIMModel
from aim_core.api.runtimeconfig import AIMClusterRuntimeConfig, AIMRuntimeConfig
from aim_core.api.service import AIMService
from aim_core.api.source import AIMClusterModelSource
from aim_core.api.template import AIMClusterServiceTemplate, AIMServiceTemplate

NAMESPACED = "Namespaced"
CLUSTER = "Cluster"
CATEGORIES = ("aim", "all")


@attrs.frozen
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry; priority 1 shows only with ``-o wide``."""

    name: str
    type: str
    json_path: str
    priority: int = 0


@attrs.frozen
class KindInfo:
    """CRD facts of one kind."""

    cls: type
    kind: str
    scope: str
    short_name: str
    printer_columns: tuple[PrinterColumn, ...] = ()
    categories: tuple[str, ...] = CATEGORIES
    status_subresource: bool = True
    upstream: bool = True  # False: a kind beyond upstream's ten (docs/beyond-upstream.md)

    @property
    def group(self) -> str:
        return API_GROUP

    @property
    def api_version(self) -> str:
        return API_VERSION

    @property
    def plural(self) -> str:
        return self.kind.lower() + "s"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def short_names(self) -> tuple[str, ...]:
        return (self.short_name,)

    @property
    def namespaced(self) -> bool:
        return self.scope == NAMESPACED

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{API_GROUP}"


def _col(name: str, path: str, type: str = "string", priority: int = 0) -> PrinterColumn:
    return PrinterColumn(name=name, type=type, json_path=path, priority=priority)


_STATUS = _col("Status", ".status.status")
_AGE = _col("Age", ".metadata.creationTimestamp", "date")
_MODEL_COLUMNS = (
    _STATUS,
    _col("Source", ".status.sourceType"),
    _col("Image", ".spec.image"),
    _col("Model", ".status.imageMetadata.model.canonicalName"),
    _AGE,
)
_TEMPLATE_COLUMNS = (
    _col("Model", ".spec.modelName"),
    _STATUS,
    _col("Hardware", ".status.hardwareSummary"),
    _col("Metric", ".status.profile.metadata.metric"),
    _col("Precision", ".status.profile.metadata.precision"),
)

KINDS: tuple[KindInfo, ...] = (
    KindInfo(
        cls=AIMService,
        kind="AIMService",
        scope=NAMESPACED,
        short_name="aimsvc",
        printer_columns=(
            _STATUS,
            _col("Model", ".status.resolvedModel.name"),
            _col("Template", ".status.resolvedTemplate.name"),
            _col("Replicas", ".status.runtime.replicas"),
            _AGE,
        ),
    ),
    KindInfo(
        cls=AIMModel,
        kind="AIMModel",
        scope=NAMESPACED,
        short_name="aimmdl",
        printer_columns=_MODEL_COLUMNS,
    ),
    KindInfo(
        cls=AIMClusterModel,
        kind="AIMClusterModel",
        scope=CLUSTER,
        short_name="aimclmdl",
        printer_columns=_MODEL_COLUMNS,
    ),
    KindInfo(
        cls=AIMServiceTemplate,
        kind="AIMServiceTemplate",
        scope=NAMESPACED,
        short_name="aimtpl",
        printer_columns=_TEMPLATE_COLUMNS,
    ),
    KindInfo(
        cls=AIMClusterServiceTemplate,
        kind="AIMClusterServiceTemplate",
        scope=CLUSTER,
        short_name="aimcltpl",
        printer_columns=_TEMPLATE_COLUMNS,
    ),
    KindInfo(cls=AIMRuntimeConfig, kind="AIMRuntimeConfig", scope=NAMESPACED, short_name="aimrc"),
    KindInfo(
        cls=AIMClusterRuntimeConfig,
        kind="AIMClusterRuntimeConfig",
        scope=CLUSTER,
        short_name="aimclrc",
    ),
    KindInfo(
        cls=AIMTemplateCache,
        kind="AIMTemplateCache",
        scope=NAMESPACED,
        short_name="aimtc",
        printer_columns=(
            _col("Template", ".spec.templateName"),
            _col("Mode", ".spec.mode"),
            _STATUS,
            _col("Kind", ".status.resolvedTemplateKind"),
            _AGE,
        ),
    ),
    KindInfo(
        cls=AIMArtifact,
        kind="AIMArtifact",
        scope=NAMESPACED,
        short_name="aimart",
        printer_columns=(
            _STATUS,
            _col("Mode", ".status.mode"),
            _col("Model Size", ".status.displaySize"),
            _col("Progress", ".status.progress.displayPercentage"),
            _col("Protocol", ".status.download.protocol", priority=1),
            _col("Attempt", ".status.download.attempt", priority=1),
            _AGE,
        ),
    ),
    KindInfo(
        cls=AIMClusterModelSource,
        kind="AIMClusterModelSource",
        scope=CLUSTER,
        short_name="aimclsrc",
        printer_columns=(
            _STATUS,
            _col("Models", ".status.discoveredModels", "integer"),
            _col("LastSync", ".status.lastSyncTime", "date"),
            _AGE,
        ),
    ),
    KindInfo(
        cls=AIMBenchmark,
        kind="AIMBenchmark",
        scope=NAMESPACED,
        short_name="aimbench",
        upstream=False,
        printer_columns=(
            _STATUS,
            _col("Service", ".status.target.serviceName"),
            _col("Template", ".status.target.template"),
            _col("Tool", ".status.tool", priority=1),
            _col("Endpoint", ".status.target.endpoint", priority=1),
            _AGE,
        ),
    ),
    KindInfo(
        cls=AIMBenchmarkSweep,
        kind="AIMBenchmarkSweep",
        scope=NAMESPACED,
        short_name="aimsweep",
        upstream=False,
        printer_columns=(
            _STATUS,
            _col("Model", ".spec.model"),
            _AGE,
        ),
    ),
)

UPSTREAM_KINDS: tuple[KindInfo, ...] = tuple(k for k in KINDS if k.upstream)
"""The ten kinds upstream AIM Engine has; the others are ours alone."""

_BY_KIND = {k.kind: k for k in KINDS}
_BY_CLASS = {k.cls: k for k in KINDS}


def kind_info(kind: str) -> KindInfo | None:
    """The :class:`KindInfo` of ``kind`` (e.g. ``"AIMService"``), or None if not an AIM kind."""
    return _BY_KIND.get(kind)


def info_for(cls_or_obj: object) -> KindInfo:
    """The :class:`KindInfo` of a top-level model class or instance."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    return _BY_CLASS[cls]
