from engine.nets.mlp import MLP, Workspace

__all__ = ["MLP", "Workspace"]
