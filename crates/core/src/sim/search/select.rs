//! Steps 2 and 4 of the search (the module docs): the short list, the Pareto front and the
//! points returned, read from each point's [`Key`].

use super::candidates::Raw;
use super::types::{Candidate, Layout, PlanPoint, SearchSpec, MAX_CLOUD};

/// What the front, the short list and the nearest points read of a point (the points
/// themselves are made only for those returned).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// US dollars per million output tokens.
    pub cost: f64,
    /// Tokens per second per user.
    pub tps: f64,
    /// GPUs in all.
    pub gpus: u64,
    /// Meets the targets (simulated, or the screen's estimate).
    pub meets: bool,
    /// The larger ratio of a P99 to its target ([`miss`]).
    pub miss: f64,
}

impl Key {
    pub(super) fn of(p: &PlanPoint, spec: &SearchSpec) -> Key {
        Key {
            cost: p.usd_per_m_output,
            tps: p.tokens_per_s_user,
            gpus: p.gpus,
            meets: p.meets,
            miss: miss(p, spec),
        }
    }
}

/// How far a point is from the targets: the larger ratio of the statistic (simulated, or the
/// screen's) to its target.
fn miss(p: &PlanPoint, spec: &SearchSpec) -> f64 {
    let t = spec.targets;
    let (ttft, tpot) = match &p.simulated {
        Some(s) => spec.statistic.of(s),
        None => {
            let (a, b) = spec.statistic.screen_factors();
            (p.ttft_ms * a, p.tpot_ms * b)
        }
    };
    let r = (ttft / t.ttft_ms).max(tpot / t.tpot_ms);
    if r.is_finite() {
        r
    } else {
        f64::INFINITY
    }
}

/// The non-dominated points of `keys` (indices), fastest per user first: no other point is
/// both cheaper and faster per user.
pub fn pareto_front(keys: &[Key]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i].cost.is_finite() && keys[i].tps.is_finite())
        .collect();
    idx.sort_by(|&a, &b| {
        keys[b]
            .tps
            .total_cmp(&keys[a].tps)
            .then(keys[a].cost.total_cmp(&keys[b].cost))
    });
    let mut front = Vec::new();
    let mut cheapest = f64::INFINITY;
    for i in idx {
        if keys[i].cost < cheapest {
            cheapest = keys[i].cost;
            front.push(i);
        }
    }
    front
}

/// The short list (module docs, step 2): indices in `keys`.
pub(super) fn shortlist(
    keys: &[Key],
    raws: &[Raw],
    cands: &[Candidate],
    size: usize,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].meets).collect();
    order.sort_by(|&a, &b| {
        keys[a]
            .cost
            .total_cmp(&keys[b].cost)
            .then(keys[a].gpus.cmp(&keys[b].gpus))
    });
    let cand = |i: usize| raws[i].candidate as usize;
    let group = |i: usize| {
        let c = &cands[cand(i)];
        (
            c.gpu.clone(),
            c.engine,
            matches!(c.layout, Layout::Aggregated { .. }),
            c.spec.is_some(),
        )
    };
    let mut chosen: Vec<usize> = Vec::new();
    let mut seen_groups = Vec::new();
    let mut seen_cands = Vec::new();
    for &i in &order {
        let g = group(i);
        if chosen.len() < size && !seen_groups.contains(&g) {
            seen_groups.push(g);
            seen_cands.push(cand(i));
            chosen.push(i);
        }
    }
    for &i in &order {
        if chosen.len() >= size {
            break;
        }
        if !seen_cands.contains(&cand(i)) {
            seen_cands.push(cand(i));
            chosen.push(i);
        }
    }
    chosen
}

/// The points returned (module docs, step 4): the front, the short list, the nearest, and a
/// sample of the rest (each candidate's cheapest point), as indices of the screened points.
pub(super) fn returned(
    keys: &[Key],
    raws: &[Raw],
    candidates: usize,
    first: &[&[usize]],
) -> Vec<usize> {
    let mut keep: Vec<usize> = Vec::new();
    let mut push = |i: usize| {
        if !keep.contains(&i) {
            keep.push(i);
        }
    };
    for &i in first.iter().flat_map(|l| l.iter()) {
        push(i);
    }
    let mut cheapest: Vec<Option<usize>> = vec![None; candidates];
    for (i, r) in raws.iter().enumerate() {
        let slot = &mut cheapest[r.candidate as usize];
        if slot.is_none_or(|j| keys[i].cost < keys[j].cost) {
            *slot = Some(i);
        }
    }
    let rest: Vec<usize> = cheapest.into_iter().flatten().collect();
    let stride = rest.len().div_ceil(MAX_CLOUD).max(1);
    for &i in rest.iter().step_by(stride) {
        push(i);
    }
    keep
}
