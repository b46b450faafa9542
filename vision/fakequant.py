"""Train a reader's weights on the integer grid it will be quantised to.

:func:`vision.quantize.quantize` stores each convolution's and dense layer's weights as int8,
per output channel, symmetric: ``q = round(w / s)`` with ``s = absmax / qmax``. With
``reduce_range`` (7 bits) ``qmax`` is 64, as onnxruntime's quantiser has it, and the pairwise
sums of the fast U8S8 kernels of x86 CPUs without VNNI cannot saturate
(255 x 64 x 2 = 32,640 < 32,767; :mod:`vision.kernels`). A float reader rounded onto that
coarser grid after training loses reads; one trained with the rounding in its forward pass
(quantisation-aware training, the straight-through estimator of Bengio et al. 2013 for the
gradient) learns weights that survive it.

:func:`fake_quantize_weights` puts the rounding on every ``Conv2d`` and ``Linear`` weight of a
model (a ``torch.nn.utils.parametrize`` parametrisation); :func:`bake` replaces each by its
rounded value before export, so that the exported float weights sit on the grid and the
quantiser maps them back to the same integers. Torch is a training-only dependency.
"""

from __future__ import annotations

from vision.quantize import WEIGHT_QMAX as QMAX


def grid_round(w, qmax: int):  # noqa: ANN001, ANN201 - torch tensors
    """``w`` (output channels first) rounded per output channel onto ``qmax`` steps each side
    of zero; the gradient passes straight through. With ``qmax`` 2 the row
    ``[1.0, 0.3, -0.52]`` becomes ``[1.0, 0.5, -0.5]`` (no doctest: torch is a training
    extra, and the suite runs without it; ``tests/test_fakequant.py``)."""
    import torch

    dims = tuple(range(1, w.dim()))
    scale = w.detach().abs().amax(dim=dims, keepdim=True).clamp_min(1e-12) / qmax
    q = torch.clamp(torch.round(w / scale), -qmax, qmax) * scale
    return w + (q - w).detach()


def fake_quantize_weights(model, bits: int) -> int:  # noqa: ANN001 - a torch module
    """Round every convolution's and dense layer's weight of ``model`` onto the ``bits``-bit
    grid in each forward pass; the number of layers so wrapped."""
    from torch import nn
    from torch.nn.utils import parametrize

    if bits not in QMAX:
        raise ValueError(f"weight bits must be one of {sorted(QMAX)}, not {bits}")

    class GridRound(nn.Module):
        def forward(self, w):  # noqa: ANN001, ANN202
            return grid_round(w, QMAX[bits])

    layers = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    for layer in layers:
        parametrize.register_parametrization(layer, "weight", GridRound())
    return len(layers)


def bake(model) -> None:  # noqa: ANN001 - a torch module
    """Replace each rounded weight of ``model`` by its rounded value, in place (for export).

    Meant for a copy (``copy.deepcopy``) of a model still in training: a copy shares each
    parametrised module's class with the original, and
    ``parametrize.remove_parametrizations`` deletes the weight's property from that class,
    which would leave the original without its weight. So each module here is only switched
    back to its plain class."""
    from torch import nn
    from torch.nn.utils import parametrize

    for module in model.modules():
        if parametrize.is_parametrized(module, "weight"):
            value = module.weight.detach().clone()
            module.__class__ = module.__class__.__bases__[0]
            del module._modules["parametrizations"]
            module.weight = nn.Parameter(value)
