#!/usr/bin/env python3
"""Writes TorchScript files of real architectures for `ddpscale train --model torchscript:PATH`
and prints beside each file the ddpscale flags that feed it, its parameter count (PyTorch's
sum(p.numel()), the number ddpscale reports) and whether torch.jit.script or torch.jit.trace
wrote it.

    python3 scripts/export_model.py resnet18 bert-base --out models-out/
    python3 scripts/export_model.py all --out models-out/ --manifest models-out/manifest.json
    python3 scripts/export_model.py gpt2-small --layers 2 --d-model 64 --heads 4 --vocab 500 --seq 16 --out /tmp/m

Models (no downloads: every one starts from random parameters, seeded by --seed):
  tiny        a BatchNorm-free MLP 16 -> 32 -> 4 (tanh), for tests
  tiny-bn     the same with BatchNorm1d(32) after the first layer, for tests of the buffers
  resnet18    torchvision's resnet18 (weights=None), input 3x224x224, 1000 classes
  resnet50    torchvision's resnet50 (weights=None)
  bert-base   a BERT-base-shaped encoder built from torch.nn: 12 post-norm layers, d 768,
              12 heads, feed-forward 3072, vocab 30522, seq 128, token + position embeddings,
              pooler and a classifier head (2 classes)
  gpt2-small  a GPT-2-small-shaped decoder built from torch.nn: 12 pre-norm layers, d 768,
              12 heads, vocab 50257, causal mask, seq 128, logits per position from the
              token embedding (tied, as GPT-2's)
  vit-b16     ViT-B/16: torchvision's vit_b_16 where torchvision has it, otherwise the same
              shape built from torch.nn; input 3x224x224, 1000 classes

A LibTorch loads files written by its own PyTorch version and older ones: export with the
PyTorch whose LibTorch trains (docs/own-models.md).
"""
import argparse
import json
import math
import os
import sys
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torchvision
except ImportError:  # resnet18/resnet50 need it and say so; vit-b16 falls back to its own build
    torchvision = None


# ---- the architectures built here ---------------------------------------------------------


class TinyMlp(nn.Module):
    """16 -> 32 (tanh) -> 4: small, smooth and BatchNorm-free, so float64 runs of ddpscale and
    PyTorch can be compared to rounding."""

    def __init__(self, inputs: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


class TinyBatchNormMlp(nn.Module):
    """16 -> 32 -> BatchNorm1d -> tanh -> 4: the smallest model with BatchNorm's buffers (running
    mean and variance, float; the batch counter, int64), for tests of how they are kept."""

    def __init__(self, inputs: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.norm = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.norm(self.fc1(x))))


class SelfAttention(nn.Module):
    """Multi-head self-attention with one fused q/k/v projection (as GPT-2's c_attn; BERT's
    separate q, k, v have the same parameter count). Written out with matmul and softmax,
    which both PyTorch 1.13 and 2.x script the same way."""

    def __init__(self, d_model: int, heads: int, dropout: float, causal: bool):
        super().__init__()
        if d_model % heads != 0:
            raise SystemExit(f"--d-model {d_model} is not divisible by --heads {heads}")
        self.heads = heads
        self.head_dim = d_model // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.causal = causal
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)
        self.out_drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.size(0), x.size(1), x.size(2)
        qkv = self.qkv(x).view(batch, seq, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if self.causal:  # position i sees positions <= i; built per call, so the module has no buffer
            future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        attention = self.attn_drop(torch.softmax(scores, dim=-1))
        out = torch.matmul(attention, v).transpose(1, 2).reshape(batch, seq, d_model)
        return self.out_drop(self.proj(out))


class TransformerBlock(nn.Module):
    """BERT's post-norm block (x = LN(x + f(x)), exact GELU) or GPT-2's pre-norm block
    (x = x + f(LN(x)), tanh GELU)."""

    def __init__(self, d_model: int, heads: int, ff: int, dropout: float, causal: bool, pre_norm: bool):
        super().__init__()
        self.pre_norm = pre_norm
        self.gelu_approximation = "tanh" if pre_norm else "none"
        self.attention = SelfAttention(d_model, heads, dropout, causal)
        self.norm1 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, ff)
        self.fc_out = nn.Linear(ff, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp_drop = nn.Dropout(dropout)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp_drop(self.fc_out(F.gelu(self.fc(x), approximate=self.gelu_approximation)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre_norm:
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.mlp(x))


class BertClassifier(nn.Module):
    """token ids [batch, seq] -> logits [batch, classes] from the first position's pooled state."""

    def __init__(self, vocab: int, seq: int, d_model: int, layers: int, heads: int, ff: int, classes: int,
                 dropout: float):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d_model)
        self.position_embedding = nn.Embedding(seq, d_model)
        self.embedding_norm = nn.LayerNorm(d_model)
        self.embedding_drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            [TransformerBlock(d_model, heads, ff, dropout, causal=False, pre_norm=False) for _ in range(layers)])
        self.pooler = nn.Linear(d_model, d_model)
        self.classifier_drop = nn.Dropout(dropout)
        self.classifier = nn.Linear(d_model, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.size(1), device=ids.device)
        h = self.embedding_drop(self.embedding_norm(self.token_embedding(ids) + self.position_embedding(positions)))
        for layer in self.layers:
            h = layer(h)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return self.classifier(self.classifier_drop(pooled))


class Gpt2Decoder(nn.Module):
    """token ids [batch, seq] -> next-token logits [batch, seq, vocab]. The output projection
    is the token embedding's weight, used again rather than registered twice, so the
    parameter count is GPT-2's and data parallelism averages that gradient once."""

    def __init__(self, vocab: int, seq: int, d_model: int, layers: int, heads: int, ff: int, dropout: float):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d_model)
        self.position_embedding = nn.Embedding(seq, d_model)
        self.embedding_drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            [TransformerBlock(d_model, heads, ff, dropout, causal=True, pre_norm=True) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.size(1), device=ids.device)
        h = self.embedding_drop(self.token_embedding(ids) + self.position_embedding(positions))
        for layer in self.layers:
            h = layer(h)
        return torch.matmul(self.final_norm(h), self.token_embedding.weight.t())


class VisionTransformer(nn.Module):
    """ViT as torchvision builds it (16x16 patches by a strided convolution, a class token,
    learned positions, pre-norm blocks, the class token's state to the head), for
    torchvisions without vit_b_16."""

    def __init__(self, image: int, patch: int, d_model: int, layers: int, heads: int, ff: int, classes: int):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, d_model, kernel_size=patch, stride=patch)
        patches = (image // patch) ** 2
        self.class_token = nn.Parameter(torch.zeros(1, 1, d_model))
        self.position_embedding = nn.Parameter(torch.randn(1, patches + 1, d_model) * 0.02)
        self.layers = nn.ModuleList(
            [TransformerBlock(d_model, heads, ff, 0.0, causal=False, pre_norm=True) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.patch_embedding(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.size(0), -1, -1), x], dim=1) + self.position_embedding
        for layer in self.layers:
            x = layer(x)
        return self.head(self.final_norm(x)[:, 0])


# ---- what each name builds and feeds --------------------------------------------------------


class Export:
    """One model to write: the module, what ddpscale feeds it, and how it was built."""

    def __init__(self, name: str, module: nn.Module, input_flag: str, input_value: str, classes: int, source: str):
        self.name, self.module, self.source = name, module, source
        self.input_flag, self.input_value, self.classes = input_flag, input_value, classes

    def example_input(self, batch: int = 2) -> torch.Tensor:
        """What ddpscale feeds it (for torch.jit.trace and the check forward)."""
        if self.input_flag == "--input":
            _, vocab, seq = self.input_value.split(":")
            return torch.randint(0, int(vocab), (batch, int(seq)))
        return torch.randn([batch] + [int(s) for s in self.input_value.split("x")])


def need_torchvision(name: str):
    if torchvision is None:
        raise SystemExit(f"{name} is torchvision's: install it (Debian: apt-get install python3-torchvision; "
                         "pip: torchvision matching your torch) or export another model")


def shape_option(args, key: str, default):
    value = getattr(args, key)
    return default if value is None else value


def build_tiny(args) -> Export:
    classes = shape_option(args, "classes", 4)
    return Export("tiny", TinyMlp(16, 32, classes), "--input-shape", "16", classes, "torch.nn (this script)")


def build_tiny_bn(args) -> Export:
    classes = shape_option(args, "classes", 4)
    return Export("tiny-bn", TinyBatchNormMlp(16, 32, classes), "--input-shape", "16", classes,
                  "torch.nn (this script)")


def build_resnet(name: str, args) -> Export:
    need_torchvision(name)
    classes = shape_option(args, "classes", 1000)
    image = shape_option(args, "image_size", 224)
    module = getattr(torchvision.models, name)(weights=None, num_classes=classes)
    return Export(name, module, "--input-shape", f"3x{image}x{image}", classes, f"torchvision {torchvision.__version__}")


def build_bert(args) -> Export:
    vocab, seq = shape_option(args, "vocab", 30522), shape_option(args, "seq", 128)
    classes = shape_option(args, "classes", 2)
    module = BertClassifier(vocab, seq, shape_option(args, "d_model", 768), shape_option(args, "layers", 12),
                            shape_option(args, "heads", 12), shape_option(args, "ff", 3072), classes, args.dropout)
    return Export("bert-base", module, "--input", f"tokens:{vocab}:{seq}", classes, "torch.nn (this script)")


def build_gpt2(args) -> Export:
    vocab, seq = shape_option(args, "vocab", 50257), shape_option(args, "seq", 128)
    d_model = shape_option(args, "d_model", 768)
    module = Gpt2Decoder(vocab, seq, d_model, shape_option(args, "layers", 12), shape_option(args, "heads", 12),
                         shape_option(args, "ff", 4 * d_model), args.dropout)
    return Export("gpt2-small", module, "--input", f"tokens:{vocab}:{seq}", vocab, "torch.nn (this script)")


def build_vit(args) -> Export:
    classes, image = shape_option(args, "classes", 1000), shape_option(args, "image_size", 224)
    if image % 16 != 0:
        raise SystemExit(f"--image-size {image}: ViT-B/16 needs a multiple of 16 (16x16 patches)")
    layers, heads = shape_option(args, "layers", 12), shape_option(args, "heads", 12)
    d_model, ff = shape_option(args, "d_model", 768), shape_option(args, "ff", 3072)
    shape = f"3x{image}x{image}"
    if torchvision is not None and hasattr(torchvision.models, "vit_b_16"):
        from torchvision.models.vision_transformer import VisionTransformer as TorchvisionViT
        module = TorchvisionViT(image_size=image, patch_size=16, num_layers=layers, num_heads=heads,
                                hidden_dim=d_model, mlp_dim=ff, num_classes=classes)
        return Export("vit-b16", module, "--input-shape", shape, classes,
                      f"torchvision {torchvision.__version__} (vit_b_16's VisionTransformer)")
    module = VisionTransformer(image, 16, d_model, layers, heads, ff, classes)
    return Export("vit-b16", module, "--input-shape", shape, classes, "torch.nn (this script; torchvision has no vit_b_16)")


BUILDERS = {
    "tiny": build_tiny,
    "tiny-bn": build_tiny_bn,
    "resnet18": lambda args: build_resnet("resnet18", args),
    "resnet50": lambda args: build_resnet("resnet50", args),
    "bert-base": build_bert,
    "gpt2-small": build_gpt2,
    "vit-b16": build_vit,
}

TRANSFORMER_SHAPE = {"layers", "d_model", "heads", "ff"}
# The shrink options each model takes; the others leave it as it is.
SHRINK_OPTIONS = {
    "tiny": {"classes"},
    "tiny-bn": {"classes"},
    "resnet18": {"image_size", "classes"},
    "resnet50": {"image_size", "classes"},
    "bert-base": TRANSFORMER_SHAPE | {"vocab", "seq", "classes"},
    "gpt2-small": TRANSFORMER_SHAPE | {"vocab", "seq"},
    "vit-b16": TRANSFORMER_SHAPE | {"image_size", "classes"},
}


def refuse_unused_shrink_options(args):
    """A shrink option that none of the listed models takes is a mistake (a typo'd model list,
    or --classes for gpt2-small, whose classes are its vocabulary): refused, not ignored."""
    all_options = set().union(*SHRINK_OPTIONS.values())
    for key in sorted(all_options):
        if getattr(args, key) is None:
            continue
        if not any(key in SHRINK_OPTIONS[m] for m in args.models):
            takers = ", ".join(m for m in SHRINK_OPTIONS if key in SHRINK_OPTIONS[m])
            raise SystemExit(f"--{key.replace('_', '-')} applies to {takers}, none of which is being written")


# ---- writing and reporting ----------------------------------------------------------------


def to_torchscript(export: Export, how: str):
    """torch.jit.script keeps train/eval behaviour (BatchNorm, dropout) switchable, so it is
    tried first; trace records one train-mode forward, so a traced file always behaves as in
    training (ddpscale trains it, and its eval-mode probe then runs train-mode ops)."""
    export.module.train()
    if how in ("auto", "script"):
        try:
            return torch.jit.script(export.module), "torch.jit.script", ""
        except Exception as error:  # TorchScript's compile errors come as several types
            if how == "script":
                raise SystemExit(f"{export.name}: torch.jit.script failed: {error}")
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    else:
        reason = ""
    traced = torch.jit.trace(export.module, (export.example_input(),), check_trace=False)
    return traced, "torch.jit.trace", reason


def parameter_count(module) -> int:
    return sum(p.numel() for p in module.parameters())


def check_forward(export: Export, scripted) -> List[int]:
    """One forward of the written module on what ddpscale will feed it (batch 2, eval mode
    as ddpscale's probe): a file that cannot run its input is not written silently."""
    scripted.eval()
    with torch.no_grad():
        output = scripted(export.example_input())
    scripted.train()
    return list(output.shape)


def ddpscale_flags(path: str, export: Export) -> str:
    return f"--model torchscript:{path} {export.input_flag} {export.input_value} --classes {export.classes}"


def write_one(name: str, args) -> dict:
    torch.manual_seed(args.seed)  # the same file from the same seed and PyTorch version
    export = BUILDERS[name](args)
    scripted, method, reason = to_torchscript(export, args.mode)
    output_shape = check_forward(export, scripted)
    path = os.path.join(args.out, f"{name}.pt")
    scripted.save(path)
    return {
        "model": name, "path": path, "parameters": parameter_count(scripted), "method": method,
        "script_failed_because": reason, "source": export.source, "output_shape_batch_2": output_shape,
        "input_flag": export.input_flag, "input": export.input_value, "classes": export.classes,
        "flags": ddpscale_flags(path, export), "pytorch": torch.__version__,
    }


def parameters_text(count: int) -> str:
    return f"{count} parameters" + (f" ({count / 1e6:.1f}M)" if count >= 1e6 else "")


def print_entry(entry: dict):
    print(f"{entry['model']}: {entry['path']}  {parameters_text(entry['parameters'])}, "
          f"{entry['method']}, PyTorch {entry['pytorch']}, {entry['source']}")
    if entry["method"] == "torch.jit.trace":
        why = entry["script_failed_because"] or "--mode trace"
        print(f"  traced ({why}): the file always runs its train-mode forward (BatchNorm batch statistics, "
              "dropout on), even in eval mode")
    print(f"  ddpscale flags: {entry['flags']}")
    print(f"  output for batch 2: {entry['output_shape_batch_2']}")
    sys.stdout.flush()


def parse_args(argv: Optional[List[str]] = None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="models: " + ", ".join(BUILDERS) + " (or all). Each shrink option (for tests) changes the models "
               "it names and leaves the others as they are; one that no listed model takes is refused.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", metavar="MODEL", choices=list(BUILDERS) + ["all"],
                        help="what to write: " + ", ".join(BUILDERS) + " or all")
    parser.add_argument("--out", required=True, help="folder for MODEL.pt (created if missing)")
    parser.add_argument("--manifest", help="also write every model's path, parameters and flags to this JSON file")
    parser.add_argument("--mode", choices=["auto", "script", "trace"], default="auto",
                        help="auto: torch.jit.script, torch.jit.trace where scripting fails (default auto)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the random initial parameters (default 0)")
    parser.add_argument("--dropout", type=float, default=0.1, help="bert-base and gpt2-small dropout (default 0.1)")
    shrink = parser.add_argument_group("shrinking (for tests; default: the real architecture)")
    shrink.add_argument("--layers", type=int, help="transformer layers (bert-base, gpt2-small, vit-b16)")
    shrink.add_argument("--d-model", type=int, help="model width (bert-base, gpt2-small, vit-b16)")
    shrink.add_argument("--heads", type=int, help="attention heads (bert-base, gpt2-small, vit-b16)")
    shrink.add_argument("--ff", type=int, help="feed-forward width (bert-base, gpt2-small, vit-b16)")
    shrink.add_argument("--vocab", type=int, help="vocabulary (bert-base, gpt2-small)")
    shrink.add_argument("--seq", type=int, help="sequence length (bert-base, gpt2-small; default 128)")
    shrink.add_argument("--image-size", type=int, help="input height and width (resnet18, resnet50, vit-b16)")
    shrink.add_argument("--classes", type=int, help="output classes (tiny, resnets, bert-base, vit-b16)")
    args = parser.parse_args(argv)
    if "all" in args.models:
        args.models = list(BUILDERS)
    refuse_unused_shrink_options(args)
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for name in args.models:
        entry = write_one(name, args)
        print_entry(entry)
        entries.append(entry)
    if args.manifest:
        with open(args.manifest, "w") as manifest:
            json.dump(entries, manifest, indent=2)
            manifest.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
