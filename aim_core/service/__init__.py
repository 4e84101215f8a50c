"""AIMService: model, template, cache, serving objects, route and scaler (F43-F65).

* :mod:`.validation` -- problems in the service's own spec;
* :mod:`.models` -- which model the service serves (or creates);
* :mod:`.templates`, :mod:`.selection`, :mod:`.overrides`, :mod:`.resolution` -- the template it
  runs: a template's facts, automatic selection, the derived template for ``spec.overrides``,
  and what resolution decided;
* :mod:`.adapters` -- LoRA adapters: their artifacts, mounts and engine args; :mod:`.placement` --
  where the inference pods run;
* :mod:`.caching` -- the template cache it uses; :mod:`.runtime`, :mod:`.routing` -- what it asks of
  the runtime and route builders (plugins);
* :mod:`.observed`, :mod:`.plan` -- the observed inputs and the pure plan;
* :mod:`.controller` -- indexes, watches and the observe step.

Other kinds import only the names below (the artifact controller keeps the artifacts that
serve a service's LoRA adapters).
"""

from aim_core.service.adapter_inputs import adapter_artifacts
from aim_core.service.adapter_values import ADAPTER_LABEL

#: The field manager of the service controller's applies: an artifact it created for an adapter carries it.
FIELD_MANAGER = "aim-service-controller"

__all__ = ["ADAPTER_LABEL", "FIELD_MANAGER", "adapter_artifacts"]
