#!/usr/bin/env python3
"""CI checks of TorchScript files written by scripts/export_model.py (torchscript_tests.cmake),
each on 2 MPI ranks on CPU:

  train             tiny and resnet18 (3x32x32) train under `ddpscale train`, which reports
                    the parameter count PyTorch's sum(p.numel()) gives (printed by the script);
                    a 2-layer BERT trains in bfloat16 autocast
  pytorch-reference ddpscale's parameters after K float64 steps (torchscript_float64_steps, 2
                    ranks x batch 4) equal those of PyTorch's own training of the same file in
                    this process (torch.optim.SGD and torch.optim.Adam, batch 8) on the same
                    synthetic data, regenerated here and checked value for value
  batchnorm         tiny-bn (BatchNorm1d) in float64 on 2 ranks x batch 4, with rank 0's buffers
                    broadcast before each forward and with each rank keeping its own: every
                    rank's parameters and buffers equal those of PyTorch's own DDP
                    (DistributedDataParallel over gloo, 2 processes, broadcast_buffers True and
                    False) on the same file and data; after the broadcast every rank holds
                    rank 0's buffers
  sweep             a sweep over tiny and a shrunk GPT-2 at two batch sizes, then `ddpscale
                    report`: summary.json has every configuration, with PyTorch's parameter
                    counts

Exits 77 (CTest's skip code here) only where this Python has no torch (or, for the checks
that need it, no torchvision); scripts/setup.sh installs both, so CI runs them.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

SKIP = 77


def skip_without(modules):
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            print(f"SKIPPED: {sys.executable} has no {module} (Debian: apt-get install python3-torch "
                  "python3-torchvision, as scripts/setup.sh does; or configure with "
                  "-DDDPSCALE_TORCH_PYTHON=<a python3 that has them>)")
            sys.exit(SKIP)


def run(command, **kwargs):
    """Runs a command, echoing it; its output is returned and shown, and a failure ends the check."""
    print("$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    print(result.stdout, flush=True)
    if result.returncode != 0:
        sys.exit(f"FAILED: exit status {result.returncode}: {command[0]}")
    return result.stdout


def export(args, models, extra, folder):
    """Writes the models with the export script; returns its manifest (model -> entry)."""
    out = os.path.join(args.work, folder)
    manifest = os.path.join(out, "manifest.json")
    run([sys.executable, args.export_script, *models, "--out", out, "--manifest", manifest, *extra])
    with open(manifest) as f:
        return {entry["model"]: entry for entry in json.load(f)}


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok: " + message, flush=True)


# ---- train ------------------------------------------------------------------------------------


def check_train(args):
    skip_without(["torch", "torchvision"])
    # resnet18 at 3x32x32 (its adaptive pooling takes any size) and 10 classes: the real
    # architecture, 11.2M parameters, a step of a few hundred ms on 2 CPU ranks.
    models = export(args, ["tiny", "resnet18"], ["--image-size", "32", "--classes", "10"], "train")
    for name, entry in models.items():
        expect(entry["method"] == "torch.jit.script", f"{name} was scripted ({entry['method']})")
        output = run(args.mpirun + ["-np", "2", args.ddpscale, "train", "--device", "cpu", "--runs", "2", "--warmup",
                                    "1", "--steps", "2", "-b", "2", *entry["flags"].split()])
        header = re.search(r"ddpscale train: (\S+) \((\d+) parameters\), 2 rank", output)
        expect(header is not None, f"{name}: ddpscale's header names the model and its parameters on 2 ranks")
        expect(header.group(1) == name, f"{name}: named by the file's stem ({header.group(1)})")
        expect(int(header.group(2)) == entry["parameters"],
               f"{name}: ddpscale counts {header.group(2)} parameters, PyTorch's sum(p.numel()) {entry['parameters']}")
        expect("2 of 2 runs ok" in output, f"{name}: 2 of 2 runs ok")
        losses = [float(x) for x in re.findall(r"loss (\S+) -> (\S+)", output)[0]]
        expect(all(0 < x < 100 for x in losses), f"{name}: finite cross-entropy losses {losses}")
    # bfloat16 autocast on a scripted transformer past the graph executor's profiling runs
    # (its optimised graph, from the third call on, differentiated linear layers with no
    # autocast and failed: "expected scalar type BFloat16 but found Float").
    bert = export(args, ["bert-base"], ["--layers", "2", "--d-model", "64", "--heads", "4", "--ff", "128", "--vocab",
                                        "500", "--seq", "16", "--classes", "2"], "train-bf16")["bert-base"]
    output = run(args.mpirun + ["-np", "2", args.ddpscale, "train", "--device", "cpu", "--runs", "2", "--warmup", "2",
                                "--steps", "3", "-b", "2", "--dtype", "bfloat16", *bert["flags"].split()])
    expect("2 of 2 runs ok" in output, "bert-base (2 layers) trains 5 steps a run in bfloat16 autocast, 2 of 2 runs ok")


# ---- pytorch-reference ------------------------------------------------------------------------


def read_dump(path):
    """torchscript_float64_steps' file: header, input, labels, then one block per parameter."""
    import torch
    with open(path) as f:
        lines = f.read().splitlines()
    words = lines[0].split()
    header = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    tensors = {}
    for title, values in zip(lines[1::2], lines[2::2]):
        parts = title.split()
        name = parts[1] if parts[0] == "param" else parts[0]
        numel_at = 2 if parts[0] == "param" else 1
        sizes = [int(s) for s in parts[numel_at + 1:]]
        tensors[name] = torch.tensor([float(v) for v in values.split()], dtype=torch.float64).reshape(sizes)
    return header, tensors


def pytorch_training(module_path, optimizer_name, lr, steps, inputs, labels):
    """The independent reference: PyTorch's own torch.optim.SGD / torch.optim.Adam (defaults
    but lr, as ddpscale's LibTorch optimizers) on the loaded file in float64, cross-entropy
    (mean over the whole batch, as the average of the ranks' means is), zero_grad between steps."""
    import torch
    import torch.nn.functional as F
    module = torch.jit.load(module_path).double()
    module.train()
    parameters = [p for p in module.parameters() if p.requires_grad]
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[optimizer_name](parameters, lr=lr)
    start = {name: p.detach().clone() for name, p in module.named_parameters()}
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(module(inputs.double()), labels).backward()
        optimizer.step()
    return start, {name: p.detach().clone() for name, p in module.named_parameters()}


def regenerate_batch(seed, batch, feature_shape, classes):
    """ddpscale's synthetic batch (models/torchscript_model.cpp): one CPU generator seeded with
    seed + run (run 0 here), float32 standard normal inputs [batch, shape...], then int64 labels
    [batch] in [0, classes). LibTorch and PyTorch share the generator, so the same calls draw
    the same values."""
    import torch
    generator = torch.Generator()
    generator.manual_seed(seed)
    inputs = torch.randn([batch] + feature_shape, generator=generator, dtype=torch.float32)
    labels = torch.randint(0, classes, [batch], generator=generator, dtype=torch.int64)
    return inputs, labels


# Why 1e-10 relative to each tensor's largest value: both sides compute the same float64
# operations on the same data; they differ only in the order of sums (each rank averages its
# 4 samples and the allreduce averages the ranks, PyTorch averages 8 at once; the matrix
# products' BLAS blocking), each a relative error below n * 2^-53 ~ 1e-15 here. SGD carries that
# into the parameters unamplified. Adam's step lr * m / (sqrt(v) + eps) turns an absolute
# gradient error e into at most lr / eps * e = 1e-3 / 1e-8 * 1e-17 = 1e-12 per step (a gradient
# near zero), 5 steps 5e-12 absolute on parameters of size ~0.3: below 1e-10. A real difference
# (a wrong average, lr, bias correction or data) moves parameters by lr-sized amounts, 1e-3
# and more: seven orders of magnitude above the bound.
TOLERANCE = 1e-10
STEPS, BATCH_PER_RANK = 5, 4


def check_pytorch_reference(args):
    skip_without(["torch"])
    import torch
    entry = export(args, ["tiny"], [], "reference")["tiny"]
    classes, shape = entry["classes"], [int(s) for s in entry["input"].split("x")]
    for optimizer_name, lr in (("sgd", 0.1), ("adam", 1e-3)):
        dump_path = os.path.join(args.work, "reference", f"ddpscale-{optimizer_name}.txt")
        run(args.mpirun + ["-np", "2", args.float64_steps, entry["path"], entry["input"], str(classes), optimizer_name,
                           str(lr), str(BATCH_PER_RANK), str(STEPS), dump_path])
        header, dumped = read_dump(dump_path)
        global_batch = header["world_size"] * header["batch_per_rank"]
        expect(header["world_size"] == 2 and header["steps"] == STEPS, f"{optimizer_name}: ddpscale trained on 2 ranks")
        inputs, labels = regenerate_batch(header["seed"], global_batch, shape, classes)
        expect(torch.equal(inputs.double(), dumped["input"]) and torch.equal(labels, dumped["labels"].long()),
               f"{optimizer_name}: PyTorch regenerates ddpscale's batch of {global_batch} bit for bit")
        start, reference = pytorch_training(entry["path"], optimizer_name, lr, STEPS, inputs, labels)
        names = [n for n in dumped if n not in ("input", "labels")]
        expect(sorted(names) == sorted(reference), f"{optimizer_name}: the same parameters {names}")
        worst, least_moved = 0.0, float("inf")
        for name in names:
            size = reference[name].abs().max().item()
            worst = max(worst, (dumped[name] - reference[name]).abs().max().item() / size)
            least_moved = min(least_moved, (reference[name] - start[name]).abs().max().item() / size)
        print(f"[ agreement ] tiny, {optimizer_name} lr {lr}, {STEPS} steps, ddpscale 2 ranks x {BATCH_PER_RANK} vs "
              f"torch.optim.{'SGD' if optimizer_name == 'sgd' else 'Adam'} batch {global_batch}: worst difference "
              f"{worst:.3g} of the tensor's size (tolerance {TOLERANCE:g}); least movement {least_moved:.3g}")
        expect(least_moved > 1e-4, f"{optimizer_name}: training moved every parameter tensor (not a trivial match)")
        expect(worst < TOLERANCE, f"{optimizer_name}: ddpscale's float64 parameters equal PyTorch's to {TOLERANCE:g}")


# ---- batchnorm --------------------------------------------------------------------------------

# Why PyTorch's DDP and not one process with batch 8 is the reference here: BatchNorm in
# training normalises each rank's batch by that batch's own mean and variance, so 2 ranks x 4
# equal 1 rank x 8 only where every rank's 4 samples have the statistics of all 8, which
# random batches do not. DDP's semantics are what ddpscale must reproduce: the gradients
# averaged over ranks, and before each forward every rank takes rank 0's buffers
# (broadcast_buffers=True) or keeps its own (False).


def read_rank_dump(path):
    """torchscript_float64_steps' OUT.rank<r>: {"param"|"buffer"|"synced": {name: tensor}}."""
    import torch
    with open(path) as f:
        lines = f.read().splitlines()
    state = {"param": {}, "buffer": {}, "synced": {}}
    for title, values in zip(lines[0::2], lines[1::2]):
        kind, name, _numel, *sizes = title.split()
        numbers = [float(v) for v in values.split()]
        state[kind][name] = torch.tensor(numbers, dtype=torch.float64).reshape([int(s) for s in sizes])
    return state


def pytorch_ddp_rank(rank, world, store, module_path, optimizer_name, lr, steps, inputs, labels, broadcast_buffers,
                     out_prefix):
    """One process of PyTorch's DDP: the file in float64 on this rank's slice of the batch (the
    slice ddpscale's rank takes), torch.optim on the DDP module's parameters."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    module = torch.jit.load(module_path).double()
    module.train()
    model = torch.nn.parallel.DistributedDataParallel(module, broadcast_buffers=broadcast_buffers)
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[optimizer_name](model.parameters(), lr=lr)
    local = len(inputs) // world
    x, y = inputs[rank * local:(rank + 1) * local].double(), labels[rank * local:(rank + 1) * local]
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    torch.save({"param": {n: p.detach().clone() for n, p in module.named_parameters()},
                "buffer": {n: b.detach().clone().double() for n, b in module.named_buffers()}},
               f"{out_prefix}.rank{rank}")
    dist.destroy_process_group()


def pytorch_ddp(work, module_path, optimizer_name, lr, steps, inputs, labels, broadcast_buffers):
    import torch
    import torch.multiprocessing as mp
    tag = "broadcast" if broadcast_buffers else "own"
    store, prefix = os.path.join(work, f"gloo-store-{tag}"), os.path.join(work, f"pytorch-ddp-{tag}")
    if os.path.exists(store):
        os.remove(store)
    mp.spawn(pytorch_ddp_rank, nprocs=2, args=(2, store, module_path, optimizer_name, lr, steps, inputs, labels,
                                                broadcast_buffers, prefix))
    return [torch.load(f"{prefix}.rank{r}") for r in range(2)]


def largest_relative_difference(mine, theirs):
    worst = 0.0
    for name, reference in theirs.items():
        size = max(reference.abs().max().item(), 1e-300)
        worst = max(worst, (mine[name] - reference).abs().max().item() / size)
    return worst


def check_batchnorm(args):
    skip_without(["torch"])
    import torch
    work = os.path.join(args.work, "batchnorm")
    entry = export(args, ["tiny-bn"], [], "batchnorm")["tiny-bn"]
    classes, shape = entry["classes"], [int(s) for s in entry["input"].split("x")]
    optimizer_name, lr = "sgd", 0.1
    ours = {}
    for broadcast in (True, False):
        dump = os.path.join(work, "ddpscale-" + ("broadcast" if broadcast else "own") + ".txt")
        run(args.mpirun + ["-np", "2", args.float64_steps, entry["path"], entry["input"], str(classes), optimizer_name,
                           str(lr), str(BATCH_PER_RANK), str(STEPS), dump] + ([] if broadcast else ["own-buffers"]))
        header, _ = read_dump(dump)
        inputs, labels = regenerate_batch(header["seed"], 2 * BATCH_PER_RANK, shape, classes)
        ours[broadcast] = [read_rank_dump(f"{dump}.rank{r}") for r in range(2)]
        theirs = pytorch_ddp(work, entry["path"], optimizer_name, lr, STEPS, inputs, labels, broadcast)
        setting = f"broadcast_buffers={broadcast}"
        expect(sorted(ours[broadcast][0]["buffer"]) == sorted(theirs[0]["buffer"]) and len(theirs[0]["buffer"]) == 3,
               f"{setting}: the same 3 buffers {sorted(theirs[0]['buffer'])}")
        for rank in range(2):
            for kind in ("param", "buffer"):
                worst = largest_relative_difference(ours[broadcast][rank][kind], theirs[rank][kind])
                print(f"[ agreement ] tiny-bn, {setting}, rank {rank}, {kind}s after {STEPS} SGD steps: worst "
                      f"difference {worst:.3g} of the tensor's size (tolerance {TOLERANCE:g})")
                expect(worst < TOLERANCE, f"{setting}: rank {rank}'s {kind}s equal PyTorch DDP's")
    rank0, rank1 = ours[True]
    mean = "norm.running_mean"
    expect((rank1["buffer"][mean] - rank0["buffer"][mean]).abs().max().item() > 1e-6,
           "the ranks' running means differ after the last forward (each rank's own batch): not a trivial match")
    expect(all(torch.equal(rank1["synced"][n], rank0["synced"][n]) for n in rank0["synced"]),
           "after the broadcast every rank holds rank 0's buffers, bit for bit")
    own0, own1 = ours[False]
    expect(all(torch.equal(own1["synced"][n], own1["buffer"][n]) for n in own1["buffer"]),
           "--no-broadcast-buffers: nothing is broadcast, rank 1 keeps its own buffers")
    expect((own1["buffer"][mean] - rank1["buffer"][mean]).abs().max().item() > 1e-6,
           "--no-broadcast-buffers changes rank 1's running mean (its own history, not rank 0's)")


# ---- sweep ------------------------------------------------------------------------------------

SWEEP_SPEC = """\
# Written by tests/check_exported_torchscript.py sweep.
name: torchscript-sweep
models:
  - {{model: "torchscript:{tiny}", input_shape: "16", classes: 4}}
  - {{model: "torchscript:{gpt2}", input: "{gpt2_input}"}}
batch_sizes: [2, 4]
world_sizes: [1, 2]
runs: 2
warmup: 1
steps: 3
optimizer: adam
# Paired blocks at their least (3 rounds): this check reads parameter counts and runs, not speedups.
paired_seconds: 0.2
"""


def check_sweep(args):
    skip_without(["torch"])
    # A GPT-2-shaped decoder cut to 2 layers of width 64 (100K parameters): token ids in, a
    # label per position out; tiny: float inputs, a label per sample.
    tiny = export(args, ["tiny"], [], "sweep")["tiny"]
    gpt2 = export(args, ["gpt2-small"], ["--layers", "2", "--d-model", "64", "--heads", "4", "--vocab", "500", "--seq",
                                         "16"], "sweep")["gpt2-small"]
    spec = os.path.join(args.work, "sweep.yaml")
    with open(spec, "w") as f:
        f.write(SWEEP_SPEC.format(tiny=tiny["path"], gpt2=gpt2["path"], gpt2_input=gpt2["input"]))
    study, report = os.path.join(args.work, "study"), os.path.join(args.work, "report")
    run(args.mpirun + ["-np", "2", args.ddpscale, "sweep", spec, "--out", study, "--overwrite", "--no-commbench", "--device", "cpu"])
    run([args.ddpscale, "report", study, "--out", report])
    with open(os.path.join(report, "summary.json")) as f:
        rows = json.load(f)
    rows = rows["configurations"] if isinstance(rows, dict) else rows
    for entry in (tiny, gpt2):
        name = entry["model"]
        mine = [r for r in rows if r["model"] == name]
        seen = sorted({(int(r["world_size"]), int(r["batch_per_rank"])) for r in mine})
        expect(seen == [(1, 2), (1, 4), (2, 2), (2, 4)], f"{name}: summary.json has world sizes 1, 2 at batch 2, 4 ({seen})")
        counts = {int(r["parameters"]) for r in mine}
        expect(counts == {entry["parameters"]},
               f"{name}: the report's parameters {sorted(counts)} equal PyTorch's sum(p.numel()) {entry['parameters']}")
        expect(all(int(r["runs_ok"]) == 2 for r in mine), f"{name}: every configuration's 2 runs ok")
    with open(os.path.join(report, "report.md")) as f:
        markdown = f.read()
    for entry in (tiny, gpt2):
        expect(f"**{entry['model']}** ({entry['parameters']:,} parameters)" in markdown,
               f"report.md names {entry['model']} with {entry['parameters']:,} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=["train", "pytorch-reference", "batchnorm", "sweep"])
    parser.add_argument("--export-script", required=True)
    parser.add_argument("--ddpscale", required=True)
    parser.add_argument("--float64-steps", help="the torchscript_float64_steps binary (pytorch-reference)")
    parser.add_argument("--mpirun", required=True, help="the mpirun prefix, one string")
    parser.add_argument("--work", required=True, help="a folder for the files (emptied of nothing; reused)")
    args = parser.parse_args()
    args.mpirun = shlex.split(args.mpirun)
    os.makedirs(args.work, exist_ok=True)
    {"train": check_train, "pytorch-reference": check_pytorch_reference, "batchnorm": check_batchnorm,
     "sweep": check_sweep}[args.check](args)
    print(f"PASSED: {args.check}")


if __name__ == "__main__":
    main()
