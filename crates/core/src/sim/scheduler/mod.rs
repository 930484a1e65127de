//! One engine replica under load: a discrete-event simulation of vLLM V1's scheduler.
//!
//! Events (request ready to send, request entering the engine after the server's frontend
//! path, engine step start, engine step end) are handled in order of time, then kind
//! (arrivals and entries at an instant are seen before a step starting at that instant), then
//! insertion order, so a run is deterministic. The requests' events sit in a binary heap; the
//! engine's own (at most one pending: a step start or a step end) waits beside it, so the
//! heap holds a few events and a step costs no heap operation. A sent request enters the engine's waiting
//! queue `frontend_overhead_s` later (`Resolved`; at once when 0). Each step, as vLLM's
//! `v1/core/sched/scheduler.py` `schedule()` does:
//!
//! 1. **Running requests first**, in admission order, each asking for its missing tokens (1
//!    for a decode; the rest of a prompt, or of a recomputation, for a prefill), capped by
//!    the token budget left (`max_num_batched_tokens`: chunked prefill). Each needs KV blocks
//!    for its new tokens (`⌈(computed + new) / block_size⌉` minus those it holds); when the
//!    free pool is short, the **last** running request is preempted (its blocks freed, its
//!    computed tokens reset to 0: recomputation, vLLM V1's only mode) and put at the front of
//!    the waiting queue, until the blocks suffice or the request itself is the one preempted.
//!    Its full blocks stay in vLLM V1's prefix cache (on by default) until an allocation
//!    evicts them, last block first ([`FreeQueue`]).
//! 2. **Then waiting requests**, first come first served, while budget is left, fewer than
//!    `max_num_seqs` run, and the blocks for their first chunk are free (admission stops at
//!    the first that does not fit); none are admitted in a step that preempted. On its first
//!    admission a request skips the prefix-cache hit share of its prompt (whole blocks, at
//!    least one token left to compute); a preempted request readmitted takes back the prefix
//!    of its blocks still cached and computes only the rest (at least one token).
//! 3. The step's time comes from [`StepModel`]; at its end every request whose computed
//!    tokens reach its length samples one token (the first is its TTFT), and a request with
//!    all its output tokens finishes and frees its blocks.
//!
//! Per step the work is proportional to the running batch; nothing is allocated per token.
//! Each request is added to the step's time as it is scheduled (one pass over the batch, not
//! two; a full-attention cache's decodes as a count and a sum of contexts, integers), and a
//! decode-only step's time is looked up in a [`StepCache`] before the step model is asked
//! (the same value: the step model is a pure function of what it is given). The release
//! profile optimises for size (`opt-level = "z"`, for the wasm bundle), under which LLVM
//! ignores `#[inline]`: the per-request helpers of the step loops are `#[inline(always)]`, and
//! the step's (request, tokens) list is overwritten in place rather than pushed to.

mod blocks;
mod schedule;
mod server;
mod sglang;
mod step_end;
mod trtllm;

use crate::base::error::CalcError;
use crate::sim::config::Budget;
use crate::sim::free_queue::FreeQueue;
use crate::sim::resolved::Resolved;
use crate::sim::stats::{Collector, Series};
use crate::sim::step_time::StepModel;
use crate::sim::workload::Request;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Most decode-only step times a [`StepCache`] keeps (it starts again when full).
const STEP_CACHE_MAX: usize = 1 << 16;

/// The times of decode-only steps already computed, by (decode tokens, sum of their
/// contexts). With full attention only (no sliding window), a decode-only step's time is a
/// function of those two numbers alone: the step model sums the contexts (integers, exact in
/// an `f64`), and such a step has as many new tokens and sampled requests as decodes. A
/// replica keeps its cache across runs (the rates of a sweep repeat most small batches);
/// a hit returns the very value the step model computed, so results are bit-identical.
#[derive(Debug, Clone, Default)]
pub(crate) struct StepCache {
    map: HashMap<(u64, u64), f64, BuildHasherDefault<PairHasher>>,
}

/// A multiplicative hash for the cache's pairs of integers (the standard hasher is built to
/// resist crafted keys; these are the simulator's own).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Where a request is in its lifecycle: not yet arrived, queued, scheduled, finished. (The
/// roofline's prefill/decode split is [`crate::calc::perf::Phase`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    NotSent,
    Waiting,
    Running,
    Done,
}

/// One request's progress: the fields every step reads, in one 64-byte cache line (a step
/// touches each running request two or three times; [`ReqTimes`] holds the rest).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub(crate) struct Req {
    pub input: u64,
    pub output: u64,
    /// Tokens whose KV is in the cache.
    computed: u64,
    /// Output tokens produced so far.
    pub generated: u64,
    blocks: u64,
    pub first_s: f64,
    pub last_s: f64,
    stage: Stage,
    hit_applied: bool,
    /// Counted in the statistics (not a warm-up request).
    pub measured: bool,
}

/// The times of a request that no step reads (set once each).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReqTimes {
    pub send_s: f64,
    /// When it reached the engine's queue (after the server's path).
    pub entered_s: f64,
    pub done_s: f64,
    pub scheduled_s: f64,
    /// A request prefilled elsewhere (disaggregated serving, [`Engine::inject_prefilled`]):
    /// when its client sent it and the server's path it took there (NaN otherwise). Its
    /// statistics count from that send, not from its arrival here.
    pub origin_s: f64,
    pub origin_frontend_s: f64,
}

impl ReqTimes {
    const NEW: ReqTimes = ReqTimes {
        send_s: f64::NAN,
        entered_s: f64::NAN,
        done_s: f64::NAN,
        scheduled_s: f64::NAN,
        origin_s: f64::NAN,
        origin_frontend_s: f64::NAN,
    };

    /// When its client sent it and its server's path: here, or where it was prefilled.
    pub fn sent(&self) -> (f64, f64) {
        if self.origin_s.is_nan() {
            (self.send_s, self.entered_s - self.send_s)
        } else {
            (self.origin_s, self.origin_frontend_s)
        }
    }
}

/// What a preempted request left in the prefix cache: `blocks` blocks (across the cache's
/// groups) holding its first `tokens` tokens, in run `run` of the [`FreeQueue`].
#[derive(Debug, Clone, Copy, Default)]
struct Cached {
    blocks: u64,
    tokens: u64,
    run: u64,
}

impl Req {
    fn new(r: &Request, measured: bool) -> Req {
        Req {
            input: r.input,
            output: r.output,
            computed: 0,
            generated: 0,
            blocks: 0,
            first_s: f64::NAN,
            last_s: f64::NAN,
            stage: Stage::NotSent,
            hit_applied: false,
            measured,
        }
    }

    /// Tokens that exist: the prompt and the output so far.
    fn tokens(&self) -> u64 {
        self.input + self.generated
    }

    /// Past its prompt: only its last sampled token is left to compute.
    #[inline(always)]
    fn decoding(&self) -> bool {
        self.generated > 0 && self.computed + 1 == self.tokens()
    }

    /// Tokens of its prompt (or of a recomputation) are still to compute.
    #[inline(always)]
    fn in_prompt(&self) -> bool {
        self.computed < self.tokens() && !self.decoding()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Request `i` becomes ready to send (ordered first at an instant).
    Ready(u32),
    /// Request `i`, sent, reaches the engine's queue after the frontend path (ordered with
    /// the arrivals at an instant).
    Enter(u32),
    /// The engine looks for work.
    StepStart,
    /// The running step ends.
    StepEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    /// Seconds as IEEE bits (times are ≥ 0, so the bits order as the values).
    t: u64,
    kind: Kind,
    seq: u64,
}

impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        let rank = |k: &Kind| u8::from(!matches!(k, Kind::Ready(_) | Kind::Enter(_)));
        (self.t, rank(&self.kind), self.seq).cmp(&(o.t, rank(&o.kind), o.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The simulation's state.
pub(crate) struct Engine<'a> {
    cfg: &'a Resolved,
    steps_model: &'a mut StepModel,
    pub reqs: Vec<Req>,
    times: Vec<ReqTimes>,
    ready_times: Vec<f64>,
    max_concurrency: u64,
    /// The requests' events (ready, enter).
    heap: BinaryHeap<Reverse<Event>>,
    /// The engine's one pending event (a step start or end), kept out of the heap: at most
    /// one is pending at a time (`busy`), and it is compared with the heap's first by the
    /// same order.
    engine_event: Option<Event>,
    seq: u64,
    waiting: VecDeque<u32>,
    running: Vec<u32>,
    client_queue: VecDeque<u32>,
    /// Requests sent the moment a client freed up (they had waited for one).
    client_sends: u64,
    in_flight: u64,
    /// Free blocks, cached ones included (vLLM counts evictable cached blocks as free).
    free_blocks: u64,
    /// The order in which free blocks are evicted, while a preempted request has some cached.
    free_queue: FreeQueue,
    /// Each request's blocks in the prefix cache since its last preemption.
    cached: Vec<Cached>,
    /// (request, new tokens) of the step in flight.
    scheduled: Vec<(u32, u64)>,
    /// Entries of `scheduled` in use (the vector is overwritten in place, step after step:
    /// a slot written costs less than a push).
    n_scheduled: usize,
    /// New tokens of the step being scheduled, and requests of it sampling a token.
    step_tokens: u64,
    step_sampled: u64,
    /// Decode tokens of the step and the sum of their contexts (given to the step model as
    /// sums on a cache miss, when `sum_decodes`; otherwise each decode goes to the step
    /// model as it is scheduled).
    decode_count: u64,
    decode_key_sum: u64,
    /// A decode-only step's time is a function of (decodes, sum of contexts): one
    /// full-attention group and no sliding window in the step model.
    sum_decodes: bool,
    /// The step holds prompt tokens (its time is never cached).
    step_prefill: bool,
    /// Decoding requests of the step verifying drafts (speculative decoding: the drafter's
    /// passes run over them).
    spec_decodes: u64,
    cache: StepCache,
    busy: bool,
    /// The cache is one full-attention group (the fast path of block accounting).
    uniform: bool,
    step_start_s: f64,
    pub steps: u64,
    pub preemptions: u64,
    pub collector: Collector,
    pub series: Series,
    pub now: f64,
    pub partial: bool,
    pub stalled: bool,
    /// Requests finished so far.
    finished: u64,
    /// Each request's arrival schedules the next one's (one benchmark's stream); a fleet's
    /// router injects each request instead ([`Engine::inject`]).
    chain: bool,
    /// Warm-up requests that must finish before the first measured one is sent (a drained
    /// warm-up, as vLLM bench's `--num-warmups` and aiperf's `--warmup-request-count` run
    /// it); 0: none, the warm-up is the stream's first requests.
    barrier: u64,
    /// Warm-up requests finished.
    warm_done: u64,
    /// Measured requests ready while the warm-up drains, in order.
    held: VecDeque<u32>,
    /// When the API server's one worker is next free (its serial work: tokenization;
    /// `Resolved::frontend_per_token_s`).
    server_free_s: f64,
    /// vLLM's asynchronous scheduling: step k+1 is scheduled as step k starts, so a request
    /// entering during step k is first admitted to step k+2 ([`Engine::pipelined`]).
    pipelined: bool,
    /// When the last step ended, seconds (a step starting then follows it back to back).
    last_end_s: f64,
    /// SGLang's new-token ratio: the share of their remaining output the running requests
    /// reserve ([`Policy::Sglang`](crate::sim::engines::Policy)).
    new_token_ratio: f64,
    /// SGLang's receive counter (`--scheduler-recv-interval`): decode steps since the
    /// scheduler last took new requests, and when it did (requests entering later wait).
    recv_count: u64,
    recv_at_s: f64,
    /// Requests finished, in order, when a coordinator reads them (disaggregated serving:
    /// `sim::disagg`); `None`: not kept.
    pub(crate) outbox: Option<Vec<u32>>,
    /// Seconds of steps run (the engine's busy time).
    pub busy_s: f64,
    /// TensorRT-LLM's attention-DP balancing: steps since prompts were last let in, the
    /// share of recent steps with a prompt waiting, the accumulated odds that every rank had
    /// one (`trtllm.rs`).
    adp_wait: u64,
    adp_share: f64,
    adp_odds: f64,
    /// TensorRT-LLM's batch waiting: steps prompts have waited since they were last let in.
    batch_waited: u64,
    /// SGLang's `batch_is_full` latch: admission stopped on a reservation and waits for a
    /// running request to finish or be retracted.
    batch_full: bool,
}

impl<'a> Engine<'a> {
    /// Tokens a decoding request `r` asks of a step: 1, or under speculative decoding 1 plus
    /// its drafts (as many as it has output tokens left beyond the one it samples anyway).
    #[inline(always)]
    pub(super) fn decode_len(&self, r: &Req) -> u64 {
        match self.cfg.spec {
            Some(s) => 1 + s.k.min(r.output.saturating_sub(r.generated + 1)),
            None => 1,
        }
    }

    pub fn new(
        cfg: &'a Resolved,
        steps_model: &'a mut StepModel,
        requests: &[Request],
        max_concurrency: Option<u64>,
        warmup: u64,
    ) -> Engine<'a> {
        let n = requests.len();
        let mut e = Engine::empty(cfg, steps_model, n, max_concurrency);
        e.reqs = requests
            .iter()
            .enumerate()
            .map(|(i, r)| Req::new(r, i as u64 >= warmup))
            .collect();
        e.times = vec![ReqTimes::NEW; n];
        e.cached = vec![Cached::default(); n];
        e.ready_times = requests.iter().map(|r| r.ready_s).collect();
        e.chain = true;
        e
    }

    /// The same engine with its warm-up drained before the first measured request is sent
    /// (`warmup` requests, when `drained`).
    pub fn drain_warmup(mut self, warmup: u64, drained: bool) -> Engine<'a> {
        self.barrier = if drained { warmup } else { 0 };
        self
    }

    /// An engine with no requests yet, room for about `n`; a fleet's router gives it each of
    /// its requests with [`Engine::inject`].
    pub fn empty(
        cfg: &'a Resolved,
        steps_model: &'a mut StepModel,
        n: usize,
        max_concurrency: Option<u64>,
    ) -> Engine<'a> {
        let uniform = cfg.groups.len() == 1
            && cfg
                .groups
                .first()
                .is_some_and(|g| g.count == 1 && g.window.is_none());
        let sum_decodes = uniform && steps_model.full_attention();
        Engine {
            cfg,
            steps_model,
            reqs: Vec::with_capacity(n),
            times: Vec::with_capacity(n),
            ready_times: Vec::with_capacity(n),
            max_concurrency: max_concurrency.unwrap_or(u64::MAX),
            heap: BinaryHeap::with_capacity(8),
            engine_event: None,
            seq: 0,
            waiting: VecDeque::with_capacity(n),
            running: Vec::with_capacity(usize::try_from(cfg.max_num_seqs).unwrap_or(256).min(n)),
            client_queue: VecDeque::new(),
            client_sends: 0,
            in_flight: 0,
            free_blocks: cfg.usable_blocks(),
            free_queue: FreeQueue::default(),
            cached: Vec::with_capacity(n),
            scheduled: Vec::with_capacity(n.min(4096)),
            n_scheduled: 0,
            step_tokens: 0,
            step_sampled: 0,
            decode_count: 0,
            decode_key_sum: 0,
            sum_decodes,
            step_prefill: false,
            spec_decodes: 0,
            cache: StepCache::default(),
            busy: false,
            uniform,
            step_start_s: 0.0,
            steps: 0,
            preemptions: 0,
            collector: Collector::new(n),
            series: Series::new(),
            now: 0.0,
            partial: false,
            stalled: false,
            finished: 0,
            chain: false,
            barrier: 0,
            warm_done: 0,
            held: VecDeque::new(),
            server_free_s: 0.0,
            pipelined: false,
            last_end_s: f64::NAN,
            new_token_ratio: sglang::SGLANG_INIT_NEW_TOKEN_RATIO,
            recv_count: 0,
            recv_at_s: f64::INFINITY,
            outbox: None,
            busy_s: 0.0,
            adp_wait: 0,
            adp_share: 0.0,
            adp_odds: 0.0,
            batch_waited: 0,
            batch_full: false,
        }
    }

    /// The same engine with vLLM's asynchronous scheduling (`pipelined`): its engine core
    /// keeps two steps in flight (`step_with_batch_queue`, a batch queue of 2), scheduling
    /// step k+1 while step k runs, so a request that reaches the waiting queue during step k
    /// is first admitted to step k+2 and waits a whole step more than under synchronous
    /// scheduling. When step k+1 holds nothing (no request left running after step k: those
    /// whose last token step k samples are not scheduled again), the engine waits for step k
    /// and schedules at its end, as without the pipeline.
    pub fn pipelined(mut self, pipelined: bool) -> Engine<'a> {
        self.pipelined = pipelined;
        self
    }

    fn push(&mut self, t: f64, kind: Kind) {
        self.seq += 1;
        let ev = Event {
            t: t.max(0.0).to_bits(),
            kind,
            seq: self.seq,
        };
        if matches!(kind, Kind::StepStart | Kind::StepEnd) {
            self.engine_event = Some(ev);
        } else {
            self.heap.push(Reverse(ev));
        }
    }

    /// The first pending event, and whether it is the heap's (else the engine's own).
    #[inline(always)]
    fn next_event(&self) -> Option<(Event, bool)> {
        match (self.heap.peek(), self.engine_event) {
            (Some(&Reverse(a)), Some(b)) => Some(if a <= b { (a, true) } else { (b, false) }),
            (Some(&Reverse(a)), None) => Some((a, true)),
            (None, Some(b)) => Some((b, false)),
            (None, None) => None,
        }
    }

    /// Runs until every request is done, the budget is spent, or the engine stalls.
    pub fn run(&mut self, budget: &Budget) -> Result<(), CalcError> {
        if let Some(&t) = self.ready_times.first() {
            self.push(t, Kind::Ready(0));
        }
        self.advance(None, budget.max_steps)?;
        Ok(())
    }

    /// Handles the events before `until` seconds (all of them when `None`), in time order;
    /// stops at a step start once `max_steps` steps have run (then `partial` is set and
    /// `true` returned). Events at `until` itself wait: a request arriving then is seen
    /// first, as in one engine's own order.
    pub fn advance(&mut self, until: Option<f64>, max_steps: u64) -> Result<bool, CalcError> {
        let limit = until.map_or(u64::MAX, |t| t.max(0.0).to_bits());
        while let Some((ev, from_heap)) = self.next_event() {
            if ev.t >= limit {
                break;
            }
            if from_heap {
                self.heap.pop();
            } else {
                self.engine_event = None;
            }
            self.now = f64::from_bits(ev.t);
            match ev.kind {
                Kind::Ready(i) => self.on_ready(i),
                Kind::Enter(i) => self.enter(i),
                Kind::StepStart => {
                    if self.steps >= max_steps {
                        self.partial = true;
                        return Ok(true);
                    }
                    self.on_step_start()?;
                }
                Kind::StepEnd => self.on_step_end(),
            }
        }
        Ok(false)
    }

    /// Gives the engine one request, ready at its `ready_s` (not before the events already
    /// handled); `measured` when it counts in the statistics.
    pub fn inject(&mut self, r: &Request, measured: bool) {
        let i = self.reqs.len() as u32;
        self.reqs.push(Req::new(r, measured));
        self.times.push(ReqTimes::NEW);
        self.cached.push(Cached::default());
        self.ready_times.push(r.ready_s);
        self.push(r.ready_s, Kind::Ready(i));
    }

    /// Gives the engine a request prefilled elsewhere (disaggregated serving): its prompt's
    /// KV and its first token arrive at `r.ready_s`, so it asks for its blocks on admission
    /// and decodes from its second token. It was sent by its client at `origin_s` and took
    /// `origin_frontend_s` of server's path there; its statistics count from that send.
    pub fn inject_prefilled(
        &mut self,
        r: &Request,
        measured: bool,
        origin_s: f64,
        origin_frontend_s: f64,
    ) {
        let i = self.reqs.len() as u32;
        let mut q = Req::new(r, measured);
        q.computed = r.input;
        q.generated = 1;
        q.hit_applied = true;
        self.reqs.push(q);
        self.times.push(ReqTimes {
            origin_s,
            origin_frontend_s,
            ..ReqTimes::NEW
        });
        self.cached.push(Cached::default());
        self.ready_times.push(r.ready_s);
        self.push(r.ready_s, Kind::Ready(i));
    }

    /// When its next event is due, seconds (`None`: nothing pending).
    pub fn next_time(&self) -> Option<f64> {
        self.next_event().map(|(e, _)| f64::from_bits(e.t))
    }

    /// When request `i` (its index in this engine) was sent and finished, and the server's
    /// path it took: (send, done, frontend), seconds.
    pub fn request_times(&self, i: u32) -> Option<(f64, f64, f64)> {
        let t = self.times.get(i as usize)?;
        let (send, front) = t.sent();
        Some((send, t.done_s, front))
    }

    /// Requests given and not finished: the router's measure of load.
    pub fn outstanding(&self) -> u64 {
        (self.reqs.len() as u64).saturating_sub(self.finished)
    }

    /// (running, waiting, not yet sent) at the end.
    pub fn left(&self) -> (u64, u64, u64) {
        let count = |p: Stage| self.reqs.iter().filter(|r| r.stage == p).count() as u64;
        (
            count(Stage::Running),
            count(Stage::Waiting),
            count(Stage::NotSent),
        )
    }

    /// What the run leaves for the statistics (the collector and the series are moved out).
    pub fn outcome(&mut self) -> Outcome {
        let (running, waiting, not_sent) = self.left();
        Outcome {
            num_prompts: self.reqs.iter().filter(|r| r.measured).count() as u64,
            first_send_s: self
                .reqs
                .iter()
                .zip(&self.times)
                .filter(|(r, _)| r.measured)
                .map(|(_, t)| t.sent().0)
                .filter(|t| !t.is_nan())
                .fold(f64::INFINITY, f64::min),
            now: self.now,
            running,
            waiting,
            not_sent,
            completed_all: self.times.iter().filter(|t| !t.done_s.is_nan()).count() as u64,
            generated: self.reqs.len() as u64,
            preemptions: self.preemptions,
            steps: self.steps,
            client_sends: self.client_sends,
            partial: self.partial || self.stalled,
            collector: std::mem::take(&mut self.collector),
            series: std::mem::take(&mut self.series),
        }
    }
}

/// The figures one engine (or a fleet of them, pooled) leaves for the statistics.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Measured requests (warm-up excluded).
    pub num_prompts: u64,
    /// First send of a measured request, seconds (infinite when none was sent).
    pub first_send_s: f64,
    /// Time of the last event handled, seconds.
    pub now: f64,
    pub running: u64,
    pub waiting: u64,
    pub not_sent: u64,
    /// Requests finished, warm-up included.
    pub completed_all: u64,
    /// Requests given to the engine.
    pub generated: u64,
    pub preemptions: u64,
    pub steps: u64,
    /// Requests sent the moment a client freed up (`--max-concurrency` binding).
    pub client_sends: u64,
    /// Stopped by the step budget or stalled.
    pub partial: bool,
    pub collector: Collector,
    pub series: Series,
}

impl Outcome {
    /// Pools another replica's outcome into this one (the series stays this one's).
    pub fn absorb(&mut self, o: Outcome) {
        self.num_prompts += o.num_prompts;
        self.first_send_s = self.first_send_s.min(o.first_send_s);
        self.now = self.now.max(o.now);
        self.running += o.running;
        self.waiting += o.waiting;
        self.not_sent += o.not_sent;
        self.completed_all += o.completed_all;
        self.generated += o.generated;
        self.preemptions += o.preemptions;
        self.steps += o.steps;
        self.client_sends += o.client_sends;
        self.partial |= o.partial;
        self.collector.absorb(o.collector);
    }
}
