"""Property: every plan the planner accepts is built by the lowering,
packaged, validated and computes the right product.

Generates random programs C = A x B, with B a weight (a function argument),
an activation (B = P x Q, computed first) or A itself (C = A x A), random shapes
M, K, N, J in 1..64, random input types and targets, and for each matmul a
random plan, written as constraints that name every plan field, or (one in
four) the planner's own choice. The planner
either refuses a plan with checkGemmPlan's reason ("cannot plan ...: no plan
matches constraint ...") or its memory model ("no plan fits tile memory"), or
the whole path must succeed: ipu-opt
--ipu-compile, ipu-translate --ipu-to-package, ipu-run --check ending
numericalTest=PASS. Anything else fails the test, with the case's IR kept in
the work directory.

Usage: plan_property.py --tools DIR --work DIR [--seed S] [--cases N]
       [--min-built N]
"""

import argparse
import os
import random
import subprocess
import sys


def random_plan(rng, m, k, n, tiles, in_type, rhs_weight, acc_f16):
    if rng.random() < 0.25:
        return None
    rows = rng.randint(1, min(m, tiles))
    cols = rng.randint(1, min(n, tiles // rows))
    inner = rng.randint(1, min(k, tiles // (rows * cols)))
    swapped = rhs_weight and rng.random() < 0.3
    weights = rng.choice(["standard", "interleaved"])
    staging = (not swapped and weights == "standard" and rng.random() < 0.3)
    reduction = rng.choice(["complete", "staged"]) if inner > 1 else "complete"
    if acc_f16:
        partials = "f16"
    else:
        partials = "f16" if in_type != "f32" and rng.random() < 0.3 else "f32"
    return (f'rows = {rows}, cols = {cols}, inner = {inner}, '
            f'orientation = "{"swapped" if swapped else "normal"}", '
            f'weights = "{weights}", reduction = "{reduction}", '
            f'staging = {"true" if staging else "false"}, '
            f'partials = "{partials}"')


def tensor(rows, cols, element):
    return f"tensor<{rows}x{cols}x{element}>"


def matmul(result, lhs, rhs, m, k, n, in_type, out_type, acc, plan):
    # No plan: the planner's own choice, as a user would get it.
    constraints = (f", constraints = #ipu_gemm.constraints<{plan}>"
                   if plan else "")
    return (f"  %{result} = ipu_gemm.matmul %{lhs}, %{rhs} {{acc_type = {acc}"
            f"{constraints}}}\n"
            f"      : {tensor(m, k, in_type)}, {tensor(k, n, in_type)} -> "
            f"{tensor(m, n, out_type)}\n")


def generate(rng, tiles):
    m, k, n, j = (rng.randint(1, 64) for _ in range(4))
    kind = rng.choice(["weight", "weight", "activation", "activation", "self"])
    rhs_weight = kind != "activation"
    if kind == "self":
        # A x A: the argument is A (an activation) and B (a weight) at once.
        m = n = k
    if rhs_weight:
        in_type = rng.choice(["f32", "f16", "f8E4M3FN"])
    else:
        # B is the result of the first matmul: f32 or f16.
        in_type = rng.choice(["f32", "f16"])
    acc_f16 = in_type == "f16" and rng.random() < 0.2
    acc = "f16" if acc_f16 else "f32"
    out_type = "f16" if acc_f16 else "f32"
    plan = random_plan(rng, m, k, n, tiles, in_type, rhs_weight, acc_f16)
    if kind == "self":
        args = f"%a: {tensor(k, k, in_type)}"
        body = matmul("c", "a", "a", k, k, k, in_type, out_type, acc, plan)
    elif rhs_weight:
        args = (f"%a: {tensor(m, k, in_type)}, %b: {tensor(k, n, in_type)}")
        body = matmul("c", "a", "b", m, k, n, in_type, out_type, acc, plan)
    else:
        # The first matmul's plan is random too: its result layout is what
        # the second gathers B from.
        first = random_plan(rng, k, j, n, tiles, in_type, True, False)
        args = (f"%a: {tensor(m, k, in_type)}, %p: {tensor(k, j, in_type)}, "
                f"%q: {tensor(j, n, in_type)}")
        body = matmul("b", "p", "q", k, j, n, in_type, in_type, "f32", first)
        body += matmul("c", "a", "b", m, k, n, in_type, out_type, acc, plan)
    result = tensor(m, n, out_type)
    source = (f"func.func @case({args}) -> {result} {{\n{body}"
              f"  return %c : {result}\n}}\n")
    return f"{m}x{k}x{n} {in_type} B={kind}", source


def run(command, env):
    return subprocess.run(command, capture_output=True, text=True, env=env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--min-built", type=int, default=1)
    options = parser.parse_args()
    os.makedirs(options.work, exist_ok=True)
    env = dict(os.environ, IPU_LOG="warn")
    tool = lambda name: os.path.join(options.tools, name)
    rng = random.Random(options.seed)
    built = refused = failed = 0
    for case in range(options.cases):
        target = rng.choice(["ipu21-4", "ipu21-16"])
        tiles = int(target.split("-")[1])
        label, source = generate(rng, tiles)
        base = os.path.join(options.work, f"case{case}")
        with open(base + ".mlir", "w") as f:
            f.write(source)
        name = f"case={case} target={target} shape={label}"
        compiled = run([tool("ipu-opt"), base + ".mlir",
                        f"--ipu-compile=target={target}", "-o",
                        base + ".lowered.mlir"], env)
        if compiled.returncode != 0:
            errors = [l for l in compiled.stderr.splitlines() if "error:" in l]
            # The planner's refusals: checkGemmPlan's reason, or its memory
            # model.
            if errors and all("cannot plan" in e and
                              ("no plan matches" in e or
                               "no plan fits tile memory" in e)
                              for e in errors):
                refused += 1
                continue
            failed += 1
            print(f"FAIL {name} step=ipu-opt: {errors[:2]}")
            continue
        steps = [
            ("ipu-translate", [tool("ipu-translate"), "--ipu-to-package",
                               base + ".lowered.mlir", "-o", base + ".ipuexe"]),
            ("ipu-run", [tool("ipu-run"), base + ".ipuexe", "--check"]),
        ]
        for step, command in steps:
            result = run(command, env)
            if result.returncode != 0:
                failed += 1
                print(f"FAIL {name} step={step}: "
                      f"{(result.stderr + result.stdout).strip()[-400:]}")
                break
        else:
            if "numericalTest=PASS" in result.stdout:
                built += 1
            else:
                failed += 1
                print(f"FAIL {name} step=ipu-run: no numericalTest=PASS")
    print(f"plan property: cases={options.cases} built={built} "
          f"refused={refused} failed={failed}")
    if built < options.min_built:
        print(f"FAIL only {built} cases built, expected at least "
              f"{options.min_built}")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
