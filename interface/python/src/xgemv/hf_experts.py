"""xgemv as a Hugging Face transformers experts implementation (transformers 5.7 or newer):

    import xgemv
    xgemv.register_experts_implementation()           # once; `import xgemv` does it where
                                                      # transformers is already imported
    model.set_experts_implementation("xgemv")         # or from_pretrained(...,
                                                      #     experts_implementation="xgemv")

runs every experts module of the standard interface (`@use_experts_implementation`: Qwen3-MoE,
Qwen2-MoE, Mixtral, OLMoE, DeepSeek-V3, gpt-oss, ...) on xgemv's routed calls, the weights as
they are (a transposed module's, gpt-oss's, copied once into the [E, out, in] layout). Experts
xgemv does not compute (no gate, a post-expert norm, another activation, fp32 weights) run on
transformers' "grouped_mm", with a warning naming the module. xgemv.quantize_ converts the
experts modules themselves (dense or quantized), whatever the implementation the model names.
"""
import warnings

from .nn import Experts

IMPLEMENTATION = "xgemv"


class _Unsupported:
    """The fallback of a module xgemv does not compute: transformers' grouped_mm."""

    def __init__(self, module, reason):
        from transformers.integrations.moe import ExpertsInterface
        self.forward = ExpertsInterface._global_mapping["grouped_mm"]
        warnings.warn(f"xgemv: {reason}; its experts run on transformers' grouped_mm",
                      stacklevel=3)

    def serves(self, module):
        return True

    def __call__(self, module, hidden_states, top_k_index, top_k_weights):
        return self.forward(module, hidden_states, top_k_index, top_k_weights)


class _Served:
    """xgemv's experts on a module's weights, made at its first call and again when they change."""

    def __init__(self, module):
        self.experts = Experts.from_module(module)
        self.weights = (module.gate_up_proj.data_ptr(), module.down_proj.data_ptr())

    def serves(self, module):
        return self.weights == (module.gate_up_proj.data_ptr(), module.down_proj.data_ptr())

    def __call__(self, module, hidden_states, top_k_index, top_k_weights):
        return self.experts(hidden_states, top_k_index, top_k_weights)


def experts_forward(module, hidden_states, top_k_index, top_k_weights):
    """The experts implementation: module(hidden_states [T, H], top_k_index [T, k],
    top_k_weights [T, k]) -> [T, H]."""
    plan = module.__dict__.get("_xgemv_experts")
    if plan is None or not plan.serves(module):
        try:
            plan = _Served(module)
        except ValueError as error:
            plan = _Unsupported(module, str(error))
        module.__dict__["_xgemv_experts"] = plan  # a plain attribute: no submodule, no state
    return plan(module, hidden_states, top_k_index, top_k_weights)


def register_experts_implementation():
    """Registers xgemv as the transformers experts implementation named "xgemv"."""
    from transformers.integrations.moe import ExpertsInterface
    ExpertsInterface.register(IMPLEMENTATION, experts_forward)
