"""torch.nn.TransformerEncoder as a user builds it, small: two layers of
width 32, 4 heads, a feed-forward of 64, no dropout; sequence-first
([S, B, D], torch.nn's default) unless batch_first=true ([B, S, D]). For
`python -m ipu_export .../transformer_encoder.py:encoder`; torch's fused
inference path (`_transformer_encoder_layer_fwd`) is turned off, so the
export holds the layers' own ops.
"""

import torch


def encoder(batch_first="false", layers="2"):
    torch.backends.mha.set_fastpath_enabled(False)
    first = batch_first.lower() in ("true", "1")
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                             dropout=0.0, batch_first=first)
    return torch.nn.TransformerEncoder(layer, num_layers=int(layers),
                                       enable_nested_tensor=False)
