//! Capacity planning: from a traffic level and its peak to GPUs, replicas and cost.
//!
//! For every candidate accelerator and tensor-parallel degree that fits inside one node
//! (1, 2, 4, 8 up to the GPUs a node holds; TP must divide the attention heads):
//! 1. the batch memory allows: `floor((capacity × util − W/tp) / KV per sequence)`;
//! 2. the largest batch `B*` that still meets the latency targets, by binary search (TTFT and
//!    TPOT both rise with the batch), from a [`Timing`] model (the performance model,
//!    [`PerfTiming`], in the app);
//! 3. requests/s per replica from Little's law: a replica keeps `B*` requests in flight, each
//!    for `e2e = TTFT + (O − 1) × TPOT`, so it completes `B* / e2e` requests per second
//!    (equivalently, concurrency = rate × latency);
//! 4. replicas `= ceil(rate / per-replica rate)` (at least 1) for the average and the peak
//!    (`average × peak multiplier`, the chapter's Black-Friday 400 %), GPUs `= replicas × tp`,
//!    cost per hour `= GPUs × price`, per month `× 730 h`, headroom `= capacity / load − 1`.
//!
//! A replica serves by continuous batching with chunked prefill ([`PerfTiming`]): `B`
//! sequences are in flight and a new request joins as one leaves. In steady state each request
//! is prefilled once over its `O` decode steps, so every step also carries `B / O` prompts:
//! - `TPOT(B) = decode(B) + prefill(B) / O` (one decode step of the `B` sequences, plus its share
//!   of the prompts; `prefill(B)` is the prefill pass over `B` prompts);
//! - `TTFT(B) = prefill(1) + TPOT(B)` (its own prompt, plus waiting for the step in flight;
//!   `prefill(1)` alone at `B = 1`, when no other sequence is in flight).
//!
//! Over a request's life `TTFT + (O − 1) × TPOT = prefill(1) + O × decode(B) + prefill(B)`: the
//! same GPU time as the static batch of the performance model (`prefill(B) + (O − 1) ×
//! decode(B)`) plus one prompt and one step, so throughput per replica barely moves while TTFT
//! no longer grows with the whole batch's prompts (the static batch prefills all `B` prompts
//! before the first token, which made long prompts limit the batch through TTFT). Queueing
//! delay is not modelled (replicas keep the arrival rate at or below the service rate; headroom
//! is the margin).
//!
//! Replicas stay inside one node (the chapter: 900 GB/s inside, ≈ 50 GB/s across, 18× less);
//! traffic is served by adding replicas. A model that needs more GPUs than a node holds gets a
//! row with [`Reason::CrossesNodes`].
//!
//! Several prompt/output length buckets (at most [`MAX_BUCKETS`], shares summing to 1) are
//! served as one mixed batch: a step of a mixed batch costs the share-weighted mean of the
//! per-bucket step times (exact for the linear parts: weights read once, KV and FLOPs per
//! sequence), memory holds the share-weighted mean KV per sequence, and the mean request takes
//! `TTFT + (Ō − 1) × TPOT`.
//!
//! Where each part lives: the inputs (traffic, length buckets, targets, candidates) in
//! `traffic`; the [`Timing`] model and [`PerfTiming`] in `timing`; the plan's rows, reasons and
//! the plan in `answer`; the search and ranking in `planner`; the plan's derivations in
//! `derivation`; the cost chart's data in `cost`; model families in `families`; the
//! largest-model search in `largest`.

mod answer;
mod cost;
mod derivation;
mod families;
mod largest;
mod planner;
mod timing;
mod traffic;

pub use answer::{Plan, PlanOption, Reason, HOURS_PER_MONTH};
pub use cost::{cost_curve, CostCurve, CostSeries};
pub use families::Family;
pub use largest::{largest_in_family, largest_models, LargestReport, ModelVerdict};
pub use planner::{
    default_gpus_per_node, feasibility_error, options, plan, plan_model, GPUS_PER_NODE_RANGE,
    MAX_BATCH, MAX_TP_ACROSS_NODES, MAX_TP_IN_NODE,
};
pub use timing::{
    attention_heads, LowerBound, MemoryNeed, PerfTiming, StepParts, StepTimes, Timing,
};
pub use traffic::{Bucket, Candidate, PlanInputs, Targets, Traffic, MAX_BUCKETS, SHARE_TOLERANCE};
