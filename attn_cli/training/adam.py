"""Adam (Kingma & Ba, 2015), pure numpy and without state hidden in objects.

Each step returns new weight arrays and a new state instead of changing them in place, so a caller
interrupted between two steps (Ctrl-C during training) still holds one consistent set of weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AdamSettings:
    learning_rate: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8


@dataclass(frozen=True)
class AdamState:
    """The running moments of every parameter, and how many steps made them."""

    steps: int
    first: tuple[np.ndarray, ...]  # m: running mean of the gradients, one array per parameter
    second: tuple[np.ndarray, ...]  # v: running mean of their squares


def adam_start(parameters: tuple[np.ndarray, ...]) -> AdamState:
    """Zero moments for parameters of these shapes."""
    return AdamState(0, tuple(np.zeros_like(p) for p in parameters), tuple(np.zeros_like(p) for p in parameters))


def adam_step(parameters: tuple[np.ndarray, ...], gradients: tuple[np.ndarray, ...], state: AdamState,
              settings: AdamSettings = AdamSettings()) -> tuple[tuple[np.ndarray, ...], AdamState]:
    """One update: p - lr * m_hat / (sqrt(v_hat) + eps), with the moments' start-up bias corrected."""
    steps = state.steps + 1
    first = tuple(settings.beta1 * m + (1 - settings.beta1) * g for m, g in zip(state.first, gradients))
    second = tuple(settings.beta2 * v + (1 - settings.beta2) * g * g for v, g in zip(state.second, gradients))
    bias1, bias2 = 1 - settings.beta1 ** steps, 1 - settings.beta2 ** steps
    updated = tuple(p - settings.learning_rate * (m / bias1) / (np.sqrt(v / bias2) + settings.epsilon)
                    for p, m, v in zip(parameters, first, second))
    return updated, AdamState(steps, first, second)
