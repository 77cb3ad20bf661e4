"""The A/B of tanh_expm1_vs_port.txt: one measurement in fresh interpreters of two trees, interleaved.
Usage: python ab_tanh.py parity|tanh|lstm OLD_TREE NEW_TREE (it was run as three scripts, one per part)."""
import subprocess, sys
PART, OLD, NEW = sys.argv[1:4]
CODE_parity = "\nimport sys; sys.path.insert(0, 'benchmarks')\nfrom threadpoolctl import threadpool_limits\nfrom bench_parity import ParityEpoch, epoch_seconds\nwith threadpool_limits(1):\n    j = ParityEpoch(); epoch_seconds(j, epochs=200, repeats=1)\n    print(min(epoch_seconds(j, epochs=1000, repeats=5) for _ in range(2)) * 1e6)\n"
CODE_tanh = '\nimport time, numpy as np\nfrom engine.tanhkernel import tanh\nz = np.random.default_rng(0).standard_normal((256, 100)) * 2; out = np.empty_like(z)\ntanh(z, out)\nbest = 1e9\nfor _ in range(20):\n    t0 = time.perf_counter()\n    for _ in range(200): tanh(z, z if False else out)\n    best = min(best, (time.perf_counter() - t0) / 200)\nzz = z.copy()\nb2 = 1e9\nfor _ in range(20):\n    t0 = time.perf_counter()\n    for _ in range(200): tanh(zz, zz)\n    b2 = min(b2, (time.perf_counter() - t0) / 200)\nprint(best * 1e6, b2 * 1e6)\n'
CODE_lstm = '\nimport time, numpy as np\nfrom engine import seqkernels as K\nrng = np.random.default_rng(0)\nT, B, H = 200, 4, 64\nZ0 = rng.standard_normal((T, B, 4 * H)); Wh = rng.standard_normal((H, 4 * H)) * 0.1\nC, TC, Hs = np.empty((T, B, H)), np.empty((T, B, H)), np.zeros((T + 1, B, H))\nbest = 1e9\nfor _ in range(15):\n    Z = Z0.copy()\n    t0 = time.perf_counter(); K.lstm_forward(Z, Wh, C, Hs, TC); best = min(best, time.perf_counter() - t0)\nprint(best * 1e6)\n'
CODE = {"parity": CODE_parity, "tanh": CODE_tanh, "lstm": CODE_lstm}[PART]
res = {OLD: [], NEW: []}
for r in range(4 if PART == "parity" else 3):
    for d in (OLD, NEW):
        out = subprocess.run([sys.executable, "-c", CODE], cwd=d, capture_output=True, text=True)
        res[d].append(out.stdout.strip() or out.stderr[-300:])
for d, v in res.items():
    print(d, v)
