"""A small vision transformer written as timm's VisionTransformer writes its
layers (timm/models/vision_transformer.py, v1.0.31: Attention with a fused
qkv Linear, reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0) and
F.scaled_dot_product_attention; a learned position embedding added to the
patch embedding; pre-norm blocks; a final LayerNorm), in the configuration
timm's SigLIP towers use (no class token, GELU with the tanh approximation).

timm itself imports torchvision, which has no build beside the CPU build of
torch 2.13.0 on the project's machines; this file reproduces the forms its
export takes. For `python -m ipu_export .../timm_style_vit.py:vit`.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))


class VisionTransformer(nn.Module):
    def __init__(self, dim, depth, num_heads, hidden, image, patch):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.pos_embed = nn.Parameter(torch.randn(1, (image // patch) ** 2, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, num_heads, hidden) for _ in range(depth))
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = x + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def vit(dim="64", depth="2", heads="4", hidden="160", image="56", patch="14"):
    return VisionTransformer(int(dim), int(depth), int(heads), int(hidden), int(image),
                             int(patch))
