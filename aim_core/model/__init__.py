"""AIMModel and AIMClusterModel: image metadata, the templates a model creates, status (F20-F28).

* :mod:`.images`, :mod:`.metadata` -- where a model's image metadata comes from, and image labels
  read into ``status.imageMetadata``;
* :mod:`.fetch` -- reading image metadata from registries, once per image (the only I/O here);
* :mod:`.templates` -- the AIMServiceTemplates a model creates from its recommended deployments;
* :mod:`.aggregate` -- health flowing between a model and its templates;
* :mod:`.validation`, :mod:`.observed`, :mod:`.plan` -- checks, the observed inputs, the pure plan;
* :mod:`.controller` -- indexes, watches and the observe step.

Other kinds import only the names below.
"""

from aim_core.model.aggregate import model_health_for_template
from aim_core.model.view import ModelView

__all__ = ["ModelView", "model_health_for_template"]
