//! Disaggregated serving: a pool of prefill workers and a pool of decode workers, each with
//! its own engine shape, the prompt's KV moved between them (NVIDIA Dynamo, llm-d, SGLang's
//! PD disaggregation, vLLM's KV connectors).
//!
//! A request goes, when its client sends it, to the least-loaded prefill unit (a worker's
//! data-parallel rank or pipeline unit: `sim::parallel`), where it takes the server's path and
//! its prompt is prefilled as one request of one output token. When that step ends its KV
//! leaves for the least-loaded decode unit: the bytes the prefill engine holds for it on one
//! GPU (its blocks × the engine's bytes per block, as it allocated them), over one GPU's link
//! ([`KvLink`]: NVLink inside one NVLink domain, a 400 Gb/s NIC per GPU over InfiniBand or
//! RoCE between nodes), plus a fixed cost per hand-off (fitted:
//! [`DEFAULT_KV_TRANSFER_LATENCY_MS`]). The transfer starts when the prefill ends (not
//! overlapped layer by layer: TensorRT-LLM's and vLLM's NIXL connectors and SGLang's Mooncake
//! backend send a request's cache once its prefill is done). At the decode
//! unit it waits for admission (its blocks allocated at once), then decodes from its second
//! token: its first token reaches the client with the second, at the end of its first decode
//! step, so TTFT = server's path + prefill queue + prefill + transfer + decode queue + one
//! decode step. A request of one output token ends at the prefill unit.
//!
//! Units advance together in time order: each one's events up to the earliest pending event
//! of any unit or of the coordinator (a send, a transfer landing); a finished prefill or
//! decode is read from the unit's outbox at once, so a client's next request (closed-loop,
//! `max_concurrency`) is sent the instant its previous one ends, as in one engine.
//! Statistics are pooled over the decode units (and the prefill units for one-token
//! requests); [`DisaggSummary`] adds each pool's busy share and the stages of TTFT.

use crate::base::error::{CalcError, Phrase};
use crate::hardware::Accelerator;
use crate::sim::config::{Budget, Slo};
use crate::sim::fleet::{route, Router};
pub use crate::sim::kv_link::KvLink;
use crate::sim::replica::{assemble, Replica};
use crate::sim::resolved::Resolved;
pub use crate::sim::result::DisaggSummary;
use crate::sim::result::{SimNote, SimResult};
use crate::sim::scheduler::{Engine, Outcome};
use crate::sim::stats::dist;
use crate::sim::step_time::StepModel;
use crate::sim::workload::{Request, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Most workers in one pool.
pub const MAX_WORKERS: u64 = 256;

/// The fixed cost of one hand-off from prefill to decode beside the KV's bytes, ms: the
/// disaggregated path's own latency per request (the router's trip to the prefill worker,
/// the connector's handshake, the decode side's notice that the blocks are in). Fitted on
/// the measured disaggregated runs at 16 clients or fewer, where queueing does not hide it
/// (`tests/disagg_e2e_validation.rs` `fit_handoff_latency`: 66 rows of TensorRT-LLM, SGLang
/// and vLLM behind Dynamo, median |TTFT error| 50.9% at 1 ms, 20.8% at 200 ms; held out,
/// DeepSeek-R1's rows 22.8% with 200 ms fitted on Kimi-K2.5's, Kimi-K2.5's 14.9% with 175).
pub const DEFAULT_KV_TRANSFER_LATENCY_MS: f64 = 200.0;

/// The two pools and the link between them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DisaggConfig {
    /// Prefill workers (each of the prefill replica's shape).
    pub prefill_workers: u64,
    /// Decode workers (each of the decode replica's shape).
    pub decode_workers: u64,
    /// The link the KV crosses.
    pub link: KvLink,
    /// The fixed cost of one hand-off beside the KV's bytes, ms.
    pub transfer_latency_ms: f64,
}

impl Default for DisaggConfig {
    fn default() -> Self {
        DisaggConfig {
            prefill_workers: 1,
            decode_workers: 1,
            link: KvLink::default(),
            transfer_latency_ms: DEFAULT_KV_TRANSFER_LATENCY_MS,
        }
    }
}

impl DisaggConfig {
    /// Checks the counts and the latency.
    pub fn validate(&self) -> Result<(), CalcError> {
        CalcError::whole_in(
            Phrase::tr("fld_prefill_workers"),
            self.prefill_workers,
            (1, MAX_WORKERS),
        )?;
        CalcError::whole_in(
            Phrase::tr("fld_decode_workers"),
            self.decode_workers,
            (1, MAX_WORKERS),
        )?;
        if !(self.transfer_latency_ms.is_finite()
            && (0.0..=10_000.0).contains(&self.transfer_latency_ms))
        {
            return Err(CalcError::BadValue {
                key: "kv_transfer_latency_ms".into(),
                found: Phrase::verbatim(self.transfer_latency_ms.to_string()),
                expected: Phrase::tr("exp_kv_latency"),
            });
        }
        Ok(())
    }
}

/// A coordinator's event: a client sends request `k`, or request `k`'s KV lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ext {
    Send(usize),
    Land(usize),
}

/// One pool: its units' engines, and for each unit the request (index in the stream) behind
/// each of its local ids.
struct Pool<'a> {
    engines: Vec<Engine<'a>>,
    ids: Vec<Vec<usize>>,
    last: usize,
}

impl<'a> Pool<'a> {
    /// One engine per unit, each keeping its finished requests for the coordinator; room for
    /// about its share of `n` requests.
    fn new(models: &'a mut [StepModel], res: &'a Resolved, n: usize, pipelined: bool) -> Pool<'a> {
        let units = models.len().max(1);
        let engines = models
            .iter_mut()
            .map(|m| {
                let mut e = Engine::empty(res, m, n / units + 1, None).pipelined(pipelined);
                e.outbox = Some(Vec::new());
                e
            })
            .collect();
        Pool {
            engines,
            ids: vec![Vec::new(); units],
            last: units - 1,
        }
    }

    /// The request (index in the stream) behind unit `j`'s local id `id`.
    fn request(&self, j: usize, id: u32) -> Option<usize> {
        self.ids.get(j)?.get(id as usize).copied()
    }

    /// Seconds of steps run, over the units.
    fn busy_s(&self) -> f64 {
        self.engines.iter().map(|e| e.busy_s).sum()
    }

    fn next_time(&self) -> Option<f64> {
        self.engines
            .iter()
            .filter_map(Engine::next_time)
            .min_by(f64::total_cmp)
    }

    /// Runs every unit through its events before `until`; whether the step budget ran out.
    fn advance(&mut self, until: f64, total: &mut u64, max_steps: u64) -> Result<bool, CalcError> {
        for e in &mut self.engines {
            let others = total.saturating_sub(e.steps);
            let stopped = e.advance(Some(until), max_steps.saturating_sub(others))?;
            *total = others + e.steps;
            if stopped {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The unit that takes the next request (least loaded, ties in turn).
    fn pick(&mut self, k: usize) -> usize {
        let j = route(Router::LeastLoaded, &self.engines, k, self.last);
        self.last = j;
        j
    }

    /// Finished requests since the last call: (unit, local id).
    fn drain(&mut self) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        for (j, e) in self.engines.iter_mut().enumerate() {
            if let Some(o) = e.outbox.as_mut() {
                out.extend(o.drain(..).map(|id| (j, id)));
            }
        }
        out
    }
}

/// Bytes of KV one GPU of `rep` holds for a request of `tokens` tokens: its blocks (every
/// group's, as the engine allocates them) × the engine's bytes per block.
pub fn kv_bytes_per_gpu(rep: &Replica, tokens: u64) -> f64 {
    let r = rep.resolved();
    let blocks: u64 = r
        .groups
        .iter()
        .map(|g| g.count.saturating_mul(g.blocks(tokens, 0, r.block_size)))
        .sum();
    blocks as f64 * r.budget.bytes_per_block.0 as f64
}

/// Simulates `cfg.prefill_workers` workers of `prefill` and `cfg.decode_workers` of `decode`
/// fed `wl` (the whole deployment's load), the KV of each request moved over `cfg.link` of
/// `gpu`.
pub fn simulate_disagg(
    prefill: &Replica,
    decode: &Replica,
    gpu: &Accelerator,
    cfg: &DisaggConfig,
    wl: &WorkloadSpec,
    slo: Option<Slo>,
    budget: Budget,
) -> Result<SimResult, CalcError> {
    cfg.validate()?;
    let generated = wl.generate()?;
    prefill.check_lengths(&generated.requests)?;
    decode.check_lengths(&generated.requests)?;
    let reqs = &generated.requests;
    let n = reqs.len();
    let mut notes = decode.run_notes(generated.capped_from);

    let units_p = prefill.units() * cfg.prefill_workers;
    let units_d = decode.units() * cfg.decode_workers;
    let res_p = prefill.resolved().clone();
    let mut res_d = decode.resolved().clone();
    // The server's path is taken once, on the way to the prefill worker.
    res_d.frontend_overhead_s = 0.0;
    res_d.frontend_per_token_s = 0.0;
    let step_model = |rep: &Replica| {
        let mut m = rep.step_model().clone();
        m.set_active_ranks(rep.parallel().dp.max(1));
        m
    };
    let mut models_p: Vec<StepModel> = (0..units_p).map(|_| step_model(prefill)).collect();
    let mut models_d: Vec<StepModel> = (0..units_d).map(|_| step_model(decode)).collect();
    let mut run = Run {
        pool_p: Pool::new(&mut models_p, &res_p, n, prefill.pipelined()),
        pool_d: Pool::new(&mut models_d, &res_d, n, decode.pipelined()),
        track: vec![Track::default(); n],
        ext: BinaryHeap::new(),
        waiting_clients: VecDeque::new(),
        in_flight: 0,
        next_ready: 0,
        sent: 0,
        reqs,
        clients: wl.max_concurrency.unwrap_or(u64::MAX),
        warmup: wl.warmup,
        latency_s: cfg.transfer_latency_ms / 1e3,
        bw: cfg.link.bytes_per_s(gpu),
        prefill,
        decode_steps: (0.0, 0),
    };
    let stopped = run.run(budget.max_steps)?;
    let mut o = run.outcome(stopped);
    if o.partial {
        notes.push(SimNote::Partial { steps: o.steps });
    }
    let mut res = assemble(std::mem::take(&mut o), &res_d, slo, notes);
    let summary = run.summary(cfg, (prefill, decode), res.duration_s.max(1e-12));
    res.disagg = Some(summary);
    Ok(res)
}

/// One disaggregated run in progress: the two pools, each request's way, the clients.
struct Run<'a, 'r> {
    pool_p: Pool<'a>,
    pool_d: Pool<'a>,
    track: Vec<Track>,
    ext: BinaryHeap<Reverse<(u64, Ext)>>,
    /// Requests ready while every client was busy, in order.
    waiting_clients: VecDeque<usize>,
    in_flight: u64,
    /// The stream's next request to become ready.
    next_ready: usize,
    /// Requests sent so far.
    sent: usize,
    reqs: &'r [Request],
    clients: u64,
    warmup: u64,
    latency_s: f64,
    bw: f64,
    prefill: &'r Replica,
    /// The decode units' summed batch over their steps, and their steps (set by `outcome`).
    decode_steps: (f64, u64),
}

impl Run<'_, '_> {
    fn measured(&self, k: usize) -> bool {
        k as u64 >= self.warmup
    }

    /// Runs every event; whether the step budget stopped it.
    fn run(&mut self, max_steps: u64) -> Result<bool, CalcError> {
        let mut total = 0u64;
        if let Some(r) = self.reqs.first() {
            self.ext.push(Reverse((at(r.ready_s), Ext::Send(0))));
            self.next_ready = 1;
        }
        loop {
            let t_ext = self.ext.peek().map(|Reverse((t, _))| f64::from_bits(*t));
            let t_eng = [self.pool_p.next_time(), self.pool_d.next_time()]
                .into_iter()
                .flatten()
                .min_by(f64::total_cmp);
            let (t, external) = match (t_ext, t_eng) {
                (None, None) => return Ok(false),
                (Some(a), Some(b)) if a <= b => (a, true),
                (Some(a), None) => (a, true),
                (_, Some(b)) => (b, false),
            };
            if external {
                match self.ext.pop() {
                    Some(Reverse((_, Ext::Send(k)))) => self.on_send(k, t),
                    Some(Reverse((_, Ext::Land(k)))) => self.on_land(k, t),
                    None => return Ok(false),
                }
                continue;
            }
            // Every unit's events at `t` (inclusive), then what finished.
            let until = f64::from_bits(t.max(0.0).to_bits() + 1);
            if self.pool_p.advance(until, &mut total, max_steps)?
                || self.pool_d.advance(until, &mut total, max_steps)?
            {
                return Ok(true);
            }
            self.on_prefilled(t);
            for (j, id) in self.pool_d.drain() {
                if let Some(x) = self
                    .pool_d
                    .request(j, id)
                    .and_then(|k| self.track.get_mut(k))
                {
                    x.done = true;
                }
                self.finish_client(t);
            }
        }
    }

    /// Client `k` is ready at `t`: sent to a prefill unit as a request of one output token
    /// (measured there only when that is its whole output), or queued for a free client.
    fn on_send(&mut self, k: usize, t: f64) {
        // The stream's next request becomes ready in turn.
        if self.next_ready < self.reqs.len() && self.next_ready == k + 1 {
            if let Some(r) = self.reqs.get(self.next_ready) {
                self.ext
                    .push(Reverse((at(r.ready_s), Ext::Send(self.next_ready))));
            }
            self.next_ready += 1;
        }
        if self.in_flight >= self.clients {
            self.waiting_clients.push_back(k);
            return;
        }
        let Some(&r) = self.reqs.get(k) else { return };
        self.in_flight += 1;
        self.sent += 1;
        let measured = self.measured(k) && r.output <= 1;
        let j = self.pool_p.pick(k);
        let q = Request {
            ready_s: t,
            input: r.input,
            output: 1,
        };
        if let (Some(e), Some(ids), Some(x)) = (
            self.pool_p.engines.get_mut(j),
            self.pool_p.ids.get_mut(j),
            self.track.get_mut(k),
        ) {
            x.prefill = Some((j, ids.len() as u32));
            x.send_s = t;
            e.inject(&q, measured);
            ids.push(k);
        }
    }

    /// Request `k`'s KV lands at `t`: to the least-loaded decode unit.
    fn on_land(&mut self, k: usize, t: f64) {
        let measured = self.measured(k);
        let (Some(&r), Some(x)) = (self.reqs.get(k), self.track.get_mut(k)) else {
            return;
        };
        let j = self.pool_d.pick(k);
        if let (Some(e), Some(ids)) = (self.pool_d.engines.get_mut(j), self.pool_d.ids.get_mut(j)) {
            x.decode = Some((j, ids.len() as u32));
            let q = Request { ready_s: t, ..r };
            e.inject_prefilled(&q, measured, x.send_s, x.frontend_s);
            ids.push(k);
        }
    }

    /// The prefills that ended (by `t`): their KV leaves, or the request ends there.
    fn on_prefilled(&mut self, t: f64) {
        for (j, id) in self.pool_p.drain() {
            let Some(k) = self.pool_p.request(j, id) else {
                continue;
            };
            let (_, done, front) = self
                .pool_p
                .engines
                .get(j)
                .and_then(|e| e.request_times(id))
                .unwrap_or((t, t, 0.0));
            let output = self.reqs.get(k).map_or(0, |r| r.output);
            let input = self.reqs.get(k).map_or(0, |r| r.input);
            let bytes = kv_bytes_per_gpu(self.prefill, input);
            let land = done + self.latency_s + bytes / self.bw;
            let Some(x) = self.track.get_mut(k) else {
                continue;
            };
            x.prefilled_s = done;
            x.frontend_s = front;
            if output <= 1 {
                x.done = true;
                self.finish_client(done);
                continue;
            }
            x.kv_bytes = bytes;
            x.land_s = land;
            self.ext.push(Reverse((at(land), Ext::Land(k))));
        }
    }

    /// A request ended at `t`: its client is free, and sends the next waiting request then
    /// (before any unit's event at that instant).
    fn finish_client(&mut self, t: f64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if let Some(k) = self.waiting_clients.pop_front() {
            self.ext.push(Reverse((at(t), Ext::Send(k))));
        }
    }

    /// The statistics: the decode units' requests and the prefill units' one-token ones (a
    /// prefill unit measured only those), pooled; the counts of the whole stream.
    fn outcome(&mut self, stopped: bool) -> Outcome {
        let mut o = Outcome::default();
        let mut first = true;
        let (mut batch, mut steps) = (0.0, 0u64);
        for (decode, e) in self
            .pool_d
            .engines
            .iter_mut()
            .map(|e| (true, e))
            .chain(self.pool_p.engines.iter_mut().map(|e| (false, e)))
        {
            let x = e.outcome();
            if decode {
                batch += x.collector.batch_sum;
                steps += x.collector.steps;
            }
            if first {
                o = x;
                first = false;
            } else {
                o.absorb(x);
            }
        }
        self.decode_steps = (batch, steps);
        let n = self.reqs.len();
        let count = |f: &dyn Fn(usize, &Track) -> bool| {
            self.track
                .iter()
                .enumerate()
                .filter(|(k, x)| f(*k, x))
                .count() as u64
        };
        o.num_prompts = count(&|k, _| self.measured(k));
        o.generated = n as u64;
        o.completed_all = count(&|_, x| x.done);
        // At the end: at a decode unit (running or queued there), or before it (prefill or
        // transfer).
        o.running = count(&|_, x| x.decode.is_some() && !x.done);
        o.waiting = count(&|_, x| x.prefill.is_some() && x.decode.is_none() && !x.done);
        o.not_sent = n.saturating_sub(self.sent) as u64 + self.waiting_clients.len() as u64;
        o.partial |= stopped;
        o
    }

    /// Each pool's load over the run's `duration` (seconds), and the stages of TTFT and the
    /// bytes moved over the measured requests that reached a decode unit.
    fn summary(
        &self,
        cfg: &DisaggConfig,
        (prefill, decode): (&Replica, &Replica),
        duration: f64,
    ) -> DisaggSummary {
        let busy =
            |pool: &Pool| (pool.busy_s() / pool.engines.len().max(1) as f64 / duration).min(1.0);
        let (d_batch, d_steps) = self.decode_steps;
        let landed: Vec<&Track> = self
            .track
            .iter()
            .enumerate()
            .filter(|(k, x)| self.measured(*k) && !x.land_s.is_nan())
            .map(|(_, x)| x)
            .collect();
        let stage = |f: &dyn Fn(&Track) -> f64| {
            dist(&landed.iter().map(|x| f(x) * 1e3).collect::<Vec<f64>>())
        };
        let decode_first: Vec<f64> = landed
            .iter()
            .filter_map(|x| {
                let (j, id) = x.decode?;
                let first = self.pool_d.engines.get(j)?.reqs.get(id as usize)?.first_s;
                (!first.is_nan()).then_some((first - x.land_s) * 1e3)
            })
            .collect();
        DisaggSummary {
            prefill_workers: cfg.prefill_workers,
            decode_workers: cfg.decode_workers,
            prefill_gpus: prefill.parallel().gpus(),
            decode_gpus: decode.parallel().gpus(),
            link: cfg.link,
            transfer_latency_ms: cfg.transfer_latency_ms,
            prefill_busy: busy(&self.pool_p),
            decode_busy: busy(&self.pool_d),
            prefill_stage_ms: stage(&|x| x.prefilled_s - x.send_s),
            transfer_ms: stage(&|x| x.land_s - x.prefilled_s),
            decode_first_ms: dist(&decode_first),
            decode_mean_batch: if d_steps > 0 {
                d_batch / d_steps as f64
            } else {
                0.0
            },
            kv_bytes_per_gpu: if landed.is_empty() {
                0.0
            } else {
                landed.iter().map(|x| x.kv_bytes).sum::<f64>() / landed.len() as f64
            },
        }
    }
}

/// A time as the event heaps order it.
fn at(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

/// One request's way through the two pools.
#[derive(Debug, Clone, Copy)]
struct Track {
    /// (unit, local id) at its prefill and its decode unit.
    prefill: Option<(usize, u32)>,
    decode: Option<(usize, u32)>,
    /// Sent by its client, its prefill's end, its KV's landing, seconds.
    send_s: f64,
    prefilled_s: f64,
    land_s: f64,
    /// The server's path it took, seconds.
    frontend_s: f64,
    /// Its KV sent per GPU, bytes.
    kv_bytes: f64,
    /// Finished (at its decode unit, or at its prefill unit when it asked for one token).
    done: bool,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            prefill: None,
            decode: None,
            send_s: f64::NAN,
            prefilled_s: f64::NAN,
            land_s: f64::NAN,
            frontend_s: 0.0,
            kv_bytes: 0.0,
            done: false,
        }
    }
}
