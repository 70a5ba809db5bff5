"""Samejima's graded response model (GRM) for 0..K-1 ordinal scores, fitted by marginal maximum likelihood.

Model: for item i with discrimination a_i > 0 and ordered thresholds b_i1 < ... < b_i,K-1,

    P(X >= k | θ) = 1 / (1 + exp(-a_i (θ - b_ik)))          k = 1..K-1
    P(X  = k | θ) = P(X >= k | θ) - P(X >= k+1 | θ)

with abilities θ ~ N(0, 1) integrated out on a fixed quadrature grid (Bock & Aitkin 1981, EM). The M-step
maximises the expected complete-data log-likelihood of every item at once (items are separable) with mild
priors (Bayes modal estimation, as BILOG/MULTILOG do: log a ~ N(0, 0.5²), b ~ N(0, 4²)), which keep
items whose responses all fall in one category finite instead of drifting to ±∞.

Standard errors: the inverse of each item's block of the observed information of the marginal posterior,
by central differences (the block-diagonal approximation; cross-item covariances are ignored).
Abilities: expected a posteriori (EAP) with the posterior standard deviation. Item fit: infit and outfit
mean squares at the EAP abilities (Wright & Masters 1982), flagged outside 0.5–1.5 (Linacre's
"productive for measurement" range).

Equating (Kolen & Brennan 2014, ch. 6): a linear transformation θ_X = A θ_Y + B puts form Y's
parameters on form X's scale (b → A b + B, a → a / A). `equate_mean_sigma` takes A and B from the anchor
items' difficulties; `equate_stocking_lord` minimises the squared difference of the anchors' test
characteristic curves over a grid of θ.

Missing responses are NaN and contribute nothing. Pure NumPy/SciPy: no Django here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize
from scipy.special import expit

Array = NDArray[np.float64]

PRIOR_LOG_A_SD = 0.5
PRIOR_B_SD = 4.0
FIT_LOW, FIT_HIGH = 0.5, 1.5


@dataclass(frozen=True)
class GRMFit:
    """Item and person estimates of one graded response model fit."""

    a: Array  # (items,) discrimination
    b: Array  # (items, K-1) ordered thresholds
    a_se: Array
    b_se: Array  # (items, K-1)
    b_cov: Array  # (items, K-1, K-1) covariance of the thresholds (NaN where the information was singular)
    theta: Array  # (persons,) EAP ability
    theta_sd: Array  # (persons,) posterior SD
    infit: Array  # (items,) infit mean square (NaN with fewer than 2 responses)
    outfit: Array
    n_responses: Array  # (items,) responses counted
    log_likelihood: float
    iterations: int
    converged: bool
    categories: int

    @property
    def difficulty(self) -> Array:
        """One difficulty per item: the mean of its thresholds (the item's location on the θ scale)."""
        return np.asarray(self.b.mean(axis=1), dtype=np.float64)

    @property
    def difficulty_se(self) -> Array:
        """Standard error of the mean threshold, from the thresholds' covariance (their errors correlate)."""
        k = self.b.shape[1]
        return np.asarray(np.sqrt(np.maximum(self.b_cov.sum(axis=(1, 2)), 0.0)) / k, dtype=np.float64)

    @property
    def misfit(self) -> NDArray[np.bool_]:
        """Items whose infit or outfit lies outside 0.5–1.5."""
        with np.errstate(invalid="ignore"):
            bad = (self.infit < FIT_LOW) | (self.infit > FIT_HIGH) | (self.outfit < FIT_LOW) | (self.outfit > FIT_HIGH)
        return np.asarray(bad & np.isfinite(self.infit), dtype=bool)


def grm_probabilities(theta: Array, a: Array, b: Array) -> Array:
    """P(X = k | θ) for every θ, item and category: shape (len(theta), items, K)."""
    theta = np.asarray(theta, dtype=np.float64)
    return _category_probabilities(expit(a[None, :, None] * (theta[:, None, None] - b[None, :, :])))


def _category_probabilities(cumulative: Array) -> Array:
    """P(X = k) from P(X ≥ k), k = 1..K-1 (last axis), floored at 1e-300 so that logs stay finite."""
    ones = np.ones(cumulative.shape[:2] + (1,))
    upper = np.concatenate([ones, cumulative], axis=2)
    lower = np.concatenate([cumulative, np.zeros_like(ones)], axis=2)
    return np.asarray(np.clip(upper - lower, 1e-300, 1.0), dtype=np.float64)


def _onehot(responses: Array, observed: NDArray[np.bool_], categories: int) -> Array:
    """(P, I, K) indicators of each observed response's category; all zero where missing."""
    onehot = np.zeros(responses.shape + (categories,))
    np.put_along_axis(onehot, np.where(observed, responses, 0).astype(int)[..., None], 1.0, axis=2)
    return onehot * observed[..., None]


def grm_expected_score(theta: Array, a: Array, b: Array) -> Array:
    """Expected score of each item at each θ: shape (len(theta), items)."""
    probs = grm_probabilities(theta, a, b)
    return np.asarray((probs * np.arange(probs.shape[2])).sum(axis=2), dtype=np.float64)


def grm_simulate(theta: Array, a: Array, b: Array, rng: np.random.Generator) -> Array:
    """Responses drawn from the model: shape (persons, items), values 0..K-1 as floats."""
    probs = grm_probabilities(theta, a, b)
    u = rng.random(probs.shape[:2])[..., None]
    return np.asarray((u > probs.cumsum(axis=2)).sum(axis=2), dtype=np.float64)


def _quadrature(points: int) -> tuple[Array, Array]:
    nodes = np.linspace(-5.0, 5.0, points)
    weights = np.exp(-0.5 * nodes**2)
    return nodes, weights / weights.sum()


def _pack(a: Array, b: Array) -> Array:
    """Unconstrained parameters: log a, b_1, log of each gap b_k - b_(k-1)."""
    gaps = np.log(np.maximum(np.diff(b, axis=1), 1e-6))
    return np.concatenate([np.log(a)[:, None], b[:, :1], gaps], axis=1).ravel()


def _unpack(x: Array, items: int, k1: int) -> tuple[Array, Array]:
    p = x.reshape(items, k1 + 1)
    a = np.exp(p[:, 0])
    b = np.cumsum(np.concatenate([p[:, 1:2], np.exp(p[:, 2:])], axis=1), axis=1)
    return a, b


def _expected_loglik(x: Array, counts: Array, nodes: Array, k1: int) -> tuple[float, Array]:
    """Negative expected complete-data log posterior of all items and its gradient in packed parameters.

    counts: (T, I, K) expected number of persons at node t answering item i in category k.
    """
    items = counts.shape[1]
    p = x.reshape(items, k1 + 1)
    a, b = _unpack(x, items, k1)
    star = expit(a[None, :, None] * (nodes[:, None, None] - b[None, :, :]))  # (T, I, K-1)
    probs = _category_probabilities(star)
    ll = float((counts * np.log(probs)).sum())
    ratio = counts / probs  # (T, I, K)
    # d ll / d P*_m (m = 1..K-1): P*_m enters P_(m-1) with + and P_m with -... in category terms P_m = P*_m - P*_(m+1)
    d_star = ratio[:, :, 1:] - ratio[:, :, :-1]  # (T, I, K-1)
    slope = star * (1.0 - star)
    d_a = (d_star * slope * (nodes[:, None, None] - b[None, :, :])).sum(axis=(0, 2))
    d_b = -(d_star * slope).sum(axis=0) * a[:, None]  # (I, K-1) gradient with respect to each threshold
    # priors
    log_a = p[:, 0]
    ll += float(-0.5 * (log_a**2).sum() / PRIOR_LOG_A_SD**2 - 0.5 * (b**2).sum() / PRIOR_B_SD**2)
    d_b = d_b - b / PRIOR_B_SD**2
    grad = np.empty_like(p)
    grad[:, 0] = d_a * a - log_a / PRIOR_LOG_A_SD**2
    # b_k = p1 + sum_{j<=k} exp(g_j): d/dp1 = sum_k d_b_k; d/dg_j = exp(g_j) * sum_{k>=j} d_b_k
    tail = np.cumsum(d_b[:, ::-1], axis=1)[:, ::-1]
    grad[:, 1] = tail[:, 0]
    if k1 > 1:
        grad[:, 2:] = np.exp(p[:, 2:]) * tail[:, 1:]
    return -ll, -grad.ravel()


def _posterior(onehot: Array, a: Array, b: Array, nodes: Array, weights: Array) -> tuple[Array, Array]:
    """Posterior weights of every person over the nodes (P, T) and each person's marginal log-likelihood."""
    log_lik = np.einsum("pik,tik->pt", onehot, np.log(grm_probabilities(nodes, a, b)))  # (P, T)
    log_joint = log_lik + np.log(weights)[None, :]
    top = log_joint.max(axis=1, keepdims=True)
    joint = np.exp(log_joint - top)
    marginal = joint.sum(axis=1, keepdims=True)
    return joint / marginal, (np.log(marginal) + top).ravel()


def _start_values(responses: Array, observed: NDArray[np.bool_], categories: int) -> tuple[Array, Array]:
    """Thresholds from each item's cumulative proportions (logits, sign-flipped), discrimination 1."""
    items = responses.shape[1]
    b = np.empty((items, categories - 1))
    for k in range(1, categories):
        at_least = ((responses >= k) & observed).sum(axis=0) + 0.5
        total = observed.sum(axis=0) + 1.0
        prop = at_least / total
        b[:, k - 1] = -np.log(prop / (1 - prop))
    b = np.maximum.accumulate(b, axis=1) + np.arange(categories - 1) * 1e-3
    return np.ones(items), np.clip(b, -4, 4)


def grm_fit(responses: Array, *, categories: int = 4, quadrature_points: int = 41, max_iterations: int = 1000,
            tolerance: float = 1e-4) -> GRMFit:
    """Fit the graded response model to a persons × items matrix of 0..categories-1 scores (NaN = missing)."""
    responses = np.asarray(responses, dtype=np.float64)
    if responses.ndim != 2:
        raise ValueError("responses must be a persons × items matrix")
    observed = ~np.isnan(responses)
    values = responses[observed]
    if values.size == 0:
        raise ValueError("no responses")
    if np.any((values < 0) | (values > categories - 1) | (values != np.round(values))):
        raise ValueError(f"responses must be whole numbers 0..{categories - 1}")
    persons, items = responses.shape
    if persons < 2:
        raise ValueError("at least two persons (models) are needed")
    k1 = categories - 1
    nodes, weights = _quadrature(quadrature_points)
    a, b = _start_values(responses, observed, categories)
    onehot = _onehot(responses, observed, categories)  # built once: the E-step runs on it every cycle
    x = _pack(a, b)
    previous = -np.inf
    converged = False
    iterations = 0
    log_likelihood = -np.inf
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        post, person_ll = _posterior(onehot, a, b, nodes, weights)
        log_likelihood = float(person_ll.sum())
        counts = np.einsum("pt,pik->tik", post, onehot)
        result = optimize.minimize(_expected_loglik, x, args=(counts, nodes, k1), jac=True, method="L-BFGS-B",
                                   options={"maxiter": 200})
        x = result.x
        a, b = _unpack(x, items, k1)
        if abs(log_likelihood - previous) < tolerance:
            converged = True
            break
        previous = log_likelihood
    post, person_ll = _posterior(onehot, a, b, nodes, weights)
    log_likelihood = float(person_ll.sum())
    theta = post @ nodes
    theta_sd = np.sqrt(np.maximum(post @ nodes**2 - theta**2, 0.0))
    a_se, b_se, b_cov = _standard_errors(onehot, a, b, nodes, weights)
    infit, outfit = _item_fit(responses, observed, theta, a, b)
    return GRMFit(a=a, b=b, a_se=a_se, b_se=b_se, b_cov=b_cov, theta=theta, theta_sd=theta_sd, infit=infit, outfit=outfit,
                  n_responses=observed.sum(axis=0).astype(np.float64), log_likelihood=log_likelihood,
                  iterations=iterations, converged=converged, categories=categories)


def _item_marginal_logpost(natural: Array, onehot: Array, rest: Array, nodes: Array, weights: Array) -> Array:
    """Each item's marginal log posterior as a function of its own (a, b_1..b_K-1), others held fixed.

    natural: (I, K) columns a, b_1..; rest: (P, T, I) log-likelihood of every other item at each node.
    """
    a, b = natural[:, 0], natural[:, 1:]
    log_probs = np.log(grm_probabilities(nodes, a, b))  # (T, I, K)
    own = np.einsum("pik,tik->pti", onehot, log_probs)
    joint = rest + own + np.log(weights)[None, :, None]
    top = joint.max(axis=1, keepdims=True)
    ll = (np.log(np.exp(joint - top).sum(axis=1)) + top[:, 0, :]).sum(axis=0)  # (I,)
    prior = -0.5 * np.log(np.maximum(a, 1e-12)) ** 2 / PRIOR_LOG_A_SD**2 - 0.5 * (b**2).sum(axis=1) / PRIOR_B_SD**2
    return np.asarray(ll + prior, dtype=np.float64)


def _standard_errors(onehot: Array, a: Array, b: Array, nodes: Array, weights: Array) -> tuple[Array, Array, Array]:
    log_probs = np.log(grm_probabilities(nodes, a, b))
    per_item = np.einsum("pik,tik->pti", onehot, log_probs)  # (P, T, I)
    rest = per_item.sum(axis=2, keepdims=True) - per_item
    natural = np.concatenate([a[:, None], b], axis=1)
    items, n = natural.shape
    h = 1e-3 * np.maximum(1.0, np.abs(natural))
    hessian = np.zeros((items, n, n))

    def f(shift: Array) -> Array:
        return _item_marginal_logpost(natural + shift, onehot, rest, nodes, weights)

    f0 = f(np.zeros_like(natural))
    for i in range(n):
        ei = np.zeros_like(natural)
        ei[:, i] = h[:, i]
        hessian[:, i, i] = (f(ei) - 2 * f0 + f(-ei)) / h[:, i] ** 2
        for j in range(i + 1, n):
            ej = np.zeros_like(natural)
            ej[:, j] = h[:, j]
            value = (f(ei + ej) - f(ei - ej) - f(-ei + ej) + f(-ei - ej)) / (4 * h[:, i] * h[:, j])
            hessian[:, i, j] = hessian[:, j, i] = value
    cov = np.full((items, n, n), np.nan)
    for item in range(items):
        try:
            cov[item] = np.linalg.inv(-hessian[item])
        except np.linalg.LinAlgError:
            continue
    diag = np.diagonal(cov, axis1=1, axis2=2)
    with np.errstate(invalid="ignore"):
        se = np.where(diag > 0, np.sqrt(np.abs(diag)), np.nan)
    return se[:, 0], se[:, 1:], cov[:, 1:, 1:]


def _item_fit(responses: Array, observed: NDArray[np.bool_], theta: Array, a: Array, b: Array) -> tuple[Array, Array]:
    probs = grm_probabilities(theta, a, b)  # (P, I, K)
    k = np.arange(probs.shape[2])
    expected = (probs * k).sum(axis=2)
    variance = (probs * (k[None, None, :] - expected[..., None]) ** 2).sum(axis=2)
    resid2 = np.where(observed, (np.nan_to_num(responses) - expected) ** 2, 0.0)
    var = np.where(observed, variance, 0.0)
    n = observed.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        outfit = np.where(observed, resid2 / np.maximum(variance, 1e-12), 0.0).sum(axis=0) / n
        infit = resid2.sum(axis=0) / var.sum(axis=0)
    outfit = np.where(n >= 2, outfit, np.nan)
    infit = np.where(n >= 2, infit, np.nan)
    return infit, outfit


@dataclass(frozen=True)
class Equating:
    """θ_X = A · θ_Y + B: form Y's scale expressed on form X's."""

    A: float
    B: float
    method: str
    anchors: int

    def difficulties(self, b: Array) -> Array:
        return np.asarray(self.A * np.asarray(b) + self.B, dtype=np.float64)

    def discriminations(self, a: Array) -> Array:
        return np.asarray(np.asarray(a) / self.A, dtype=np.float64)

    def abilities(self, theta: Array) -> Array:
        return np.asarray(self.A * np.asarray(theta) + self.B, dtype=np.float64)


def equate_mean_sigma(b_x: Array, b_y: Array) -> Equating:
    """Mean/sigma linking from the anchor items' thresholds on each form (all thresholds pooled)."""
    x = np.asarray(b_x, dtype=np.float64).ravel()
    y = np.asarray(b_y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 2:
        raise ValueError("mean/sigma needs the same anchor thresholds on both forms (at least two)")
    sd_y = y.std(ddof=1)
    if sd_y <= 0:
        raise ValueError("the anchors' thresholds do not vary on form Y")
    A = float(x.std(ddof=1) / sd_y)
    B = float(x.mean() - A * y.mean())
    anchors = np.asarray(b_x).shape[0]
    return Equating(A=A, B=B, method="mean_sigma", anchors=int(anchors))


def equate_stocking_lord(a_x: Array, b_x: Array, a_y: Array, b_y: Array, *, start: Equating | None = None,
                         grid: Array | None = None) -> Equating:
    """Stocking & Lord (1983): A, B minimising Σ_θ w(θ) [TCC_X(θ) − TCC_Y→X(θ)]² over the anchor items.

    The grid is N(0, 1)-weighted points on form X's scale; the search starts from mean/sigma.
    """
    a_x, a_y = np.asarray(a_x, dtype=np.float64), np.asarray(a_y, dtype=np.float64)
    b_x, b_y = np.atleast_2d(np.asarray(b_x, dtype=np.float64)), np.atleast_2d(np.asarray(b_y, dtype=np.float64))
    if b_x.shape != b_y.shape or a_x.shape != a_y.shape:
        raise ValueError("Stocking–Lord needs the same anchor items on both forms")
    nodes = np.linspace(-4, 4, 41) if grid is None else np.asarray(grid, dtype=np.float64)
    weights = np.exp(-0.5 * nodes**2)
    weights /= weights.sum()
    target = grm_expected_score(nodes, a_x, b_x).sum(axis=1)
    first = start or equate_mean_sigma(b_x, b_y)

    def loss(params: Array) -> float:
        A, B = float(params[0]), float(params[1])
        if A <= 0:
            return 1e12
        moved = grm_expected_score(nodes, a_y / A, A * b_y + B).sum(axis=1)
        return float((weights * (target - moved) ** 2).sum())

    result = optimize.minimize(loss, np.array([first.A, first.B]), method="Nelder-Mead",
                               options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 4000})
    return Equating(A=float(result.x[0]), B=float(result.x[1]), method="stocking_lord", anchors=int(a_x.size))
