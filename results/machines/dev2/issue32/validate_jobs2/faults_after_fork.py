import resource, time
from reproduce.validate import cases
from engine.perfmodel import MachineProfile
prof = MachineProfile("t", 5e-6, 3e9, "t")
c = cases(False, ["bucketed (model averaging)"])[0]
def emu(label):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = c.run("emulated", 2, prof)[0]
    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(f"{label}: emulated {t:.4f} s, minor faults {f1 - f0}")
emu("warm-up"); emu("fresh"); emu("fresh")
c.run("local", 2, None); emu("after local"); emu("again"); emu("again")
c.run("local", 2, None); emu("after local"); emu("again")
