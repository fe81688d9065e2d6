"""The sums over dense labeled kernel rows that :class:`~slicewise.moments.sums.LabeledMoments`
is made of (:class:`LabeledRowSums`): made once per cross-validation fold and added up for each
training set."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray
from .kernel_ops import (
    column_sums,
    multiply,
    positive_max,
    product_columns,
    scale_rows,
    square,
    square_column_sums,
    upper_pairs,
    weighted_sums,
)


def augmented(label: FloatArray, x: FloatArray) -> FloatArray:
    """The augmented rows (1, Y, X), by columns (for :func:`product_columns`)."""
    aug = np.empty((label.shape[0], 2 + x.shape[1]), order="F")
    aug[:, 0] = 1.0
    aug[:, 1] = label
    aug[:, 2:] = x
    return aug


@dataclass(frozen=True, eq=False)
class LabeledRowSums:
    """The sums over a set of dense labeled rows that :class:`LabeledMoments` is made of.

    Sums over disjoint sets of rows add up (``+``; the largest inclusion probability, a
    maximum): cross-validation makes them once per fold and adds the folds of each training
    set, instead of a pass over every training set's rows.

    Attributes
    ----------
    grid_size, width : int
        G and d = 2 + p (the augmented row (1, Y, X)).
    products : ndarray of shape (2G or 3G, d + d(d+1)/2)
        [k, k^2, kb]' [aug, upper aug aug'] (kb left out when it is k), one BLAS product.
    cross : ndarray of shape (G, 1)
        sum k^2 kb.
    square_b : ndarray of shape (G,) or None
        sum kb^2 (None when kb is k: then it is the mass of k^2).
    fourth : ndarray of shape (G,)
        sum k^4.
    sample_mass, pi_max, design_products : ndarray or None
        With inclusion probabilities: sum k and max pi over the rows before the design weights,
        and sum k^2 pi aug aug' (upper triangle) after them.
    """

    grid_size: int
    width: int
    products: FloatArray
    cross: FloatArray
    square_b: FloatArray | None
    fourth: FloatArray
    sample_mass: FloatArray | None = None
    pi_max: FloatArray | None = None
    design_products: FloatArray | None = None

    def __add__(self, other: LabeledRowSums) -> LabeledRowSums:
        def add(a: FloatArray | None, b: FloatArray | None) -> FloatArray | None:
            return None if a is None or b is None else a + b

        return LabeledRowSums(
            grid_size=self.grid_size,
            width=self.width,
            products=self.products + other.products,
            cross=self.cross + other.cross,
            square_b=add(self.square_b, other.square_b),
            fourth=self.fourth + other.fourth,
            sample_mass=add(self.sample_mass, other.sample_mass),
            pi_max=(
                None
                if self.pi_max is None or other.pi_max is None
                else np.maximum(self.pi_max, other.pi_max)
            ),
            design_products=add(self.design_products, other.design_products),
        )

    def select(self, columns: Sequence[int]) -> LabeledRowSums:
        """The sums of the features ``columns`` (positions in X, increasing) alone: those
        that involve only (1, Y, X_columns), taken from these (a feature set that is part of
        another, such as the signals of the learned prediction with the signals, needs no
        product of its own)."""
        keep = [0, 1, *(2 + c for c in columns)]
        pairs = {pair: t for t, pair in enumerate(upper_pairs(self.width))}
        outer = [pairs[(a, b)] for i, a in enumerate(keep) for b in keep[i:]]
        return LabeledRowSums(
            grid_size=self.grid_size,
            width=len(keep),
            products=self.products[:, keep + [self.width + t for t in outer]],
            cross=self.cross,
            square_b=self.square_b,
            fourth=self.fourth,
            sample_mass=self.sample_mass,
            pi_max=self.pi_max,
            design_products=(
                None if self.design_products is None else self.design_products[:, outer]
            ),
        )

    @classmethod
    def of(
        cls,
        k: FloatArray,
        kb: FloatArray,
        label: FloatArray,
        x: FloatArray,
        *,
        pi: FloatArray | None = None,
    ) -> LabeledRowSums:
        """The sums over dense kernel rows at h and b (``kb is k`` when b = h), labels and
        features; with ``pi`` the kernel rows are divided by pi_i before any sum but
        ``sample_mass`` and ``pi_max``."""
        same = kb is k
        sample_mass = None
        pi_max = None
        if pi is not None:
            sample_mass = column_sums(k)
            pi_max = positive_max(k, pi)
            k = np.asarray(scale_rows(k, 1.0 / pi), dtype=np.float64)
            kb = k if same else np.asarray(scale_rows(kb, 1.0 / pi), dtype=np.float64)
        aug = augmented(label, x)
        outer = product_columns(aug)  # upper triangles: each product once, not twice
        k_sq = np.asarray(square(k), dtype=np.float64)
        # one BLAS product of [k, k^2, kb] with [aug, outer] gives every sum (aug's first
        # column is the constant, so the masses are its first column)
        kernels = [k, k_sq] if kb is k else [k, k_sq, kb]
        products = np.hstack(kernels).T @ np.column_stack([aug, outer])
        return cls(
            grid_size=k.shape[1],
            width=aug.shape[1],
            products=products,
            cross=weighted_sums(multiply(k_sq, kb), aug[:, :1]),
            square_b=None if kb is k else square_column_sums(kb),
            fourth=square_column_sums(k_sq),
            sample_mass=sample_mass,
            pi_max=pi_max,
            design_products=(None if pi is None else weighted_sums(k_sq, outer * pi[:, None])),
        )
