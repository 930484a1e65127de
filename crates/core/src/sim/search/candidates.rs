//! Step 1 of the search (the module docs): every configuration built and screened in closed
//! form, its points priced, with the rules that refused the others.

use super::screen::{self, Estimate, Profile};
use super::space;
use super::types::{
    Candidate, Layout, PlanPoint, Progress, SearchGpu, SearchSpec, HEADROOM, SPEC_DEPTHS,
};
use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::Lang;
use crate::base::units::usd_per_million_tokens;
use crate::model::ModelDesc;
use crate::sim::config::{engine_frontend_overhead_ms, EngineConfig};
use crate::sim::disagg::DEFAULT_KV_TRANSFER_LATENCY_MS;
use crate::sim::engines::EngineKind;
use crate::sim::kv_link::KvLink;
use crate::sim::parallel::Parallel;
use crate::sim::spec::{SpecConfig, SpecMethod};

/// A point before it is chosen to be returned.
#[derive(Debug, Clone, Copy)]
pub(super) struct Raw {
    pub(super) candidate: u32,
    pub(super) est: Estimate,
}

/// Deployments for `rate` at `capacity` each, loaded to [`HEADROOM`].
fn replicas_for(rate: f64, capacity: f64) -> u64 {
    let n = (rate / (HEADROOM * capacity).max(1e-12)).ceil();
    if n.is_finite() {
        (n as u64).max(1)
    } else {
        u64::MAX
    }
}

/// Fills a point's cost from its deployments.
pub(super) fn priced(
    mut p: PlanPoint,
    c: &Candidate,
    node: u64,
    rate: f64,
    output: u64,
) -> PlanPoint {
    p.gpus = p.replicas.saturating_mul(c.gpus);
    p.nodes = p.gpus.div_ceil(node.max(1));
    p.usd_per_hour = p.gpus as f64 * c.usd_per_gpu_hour;
    p.usd_per_m_output = usd_per_million_tokens(p.usd_per_hour, rate * output as f64 * 3600.0);
    p
}

fn point(raw: Raw, c: &Candidate, node: u64, spec: &SearchSpec) -> PlanPoint {
    let e = raw.est;
    let p = PlanPoint {
        candidate: raw.candidate as usize,
        batch: e.batch,
        capacity_rps: e.capacity,
        replicas: replicas_for(spec.rate_rps, e.capacity),
        gpus: 0,
        nodes: 0,
        ttft_ms: e.ttft_s * 1e3,
        tpot_ms: e.tpot_s * 1e3,
        tokens_per_s_user: 1.0 / e.tpot_s.max(1e-12),
        usd_per_hour: 0.0,
        usd_per_m_output: 0.0,
        meets: screen_meets(&e, spec),
        simulated: None,
    };
    priced(p, c, node, spec.rate_rps, spec.output_len)
}

fn screen_meets(e: &Estimate, spec: &SearchSpec) -> bool {
    let (f_ttft, f_tpot) = spec.statistic.screen_factors();
    let t = spec.targets;
    e.ttft_s * 1e3 * f_ttft <= t.ttft_ms && e.tpot_s * 1e3 * f_tpot <= t.tpot_ms
}

pub(super) struct Built {
    pub(super) candidates: Vec<Candidate>,
    /// Per candidate: the GPU's index in the spec, the profile(s) it uses.
    pub(super) which: Vec<(usize, usize, Option<usize>)>,
    pub(super) profiles: Vec<Profile>,
    pub(super) raws: Vec<Raw>,
    pub(super) considered: u64,
    pub(super) refused: Vec<(CalcError, u64)>,
}

fn refuse(refused: &mut Vec<(CalcError, u64)>, e: CalcError, n: u64) {
    match refused
        .iter_mut()
        .find(|(x, _)| x.message(Lang::En) == e.message(Lang::En))
    {
        Some((_, c)) => *c += n,
        None => refused.push((e, n)),
    }
}

/// The speculative variants tried: none, and the checkpoint's MTP at each depth when asked
/// and it has the module.
fn spec_variants(model: &ModelDesc, spec: &SearchSpec) -> Vec<Option<SpecConfig>> {
    std::iter::once(None)
        .chain(
            SPEC_DEPTHS
                .iter()
                .filter(|_| spec.speculative && !model.mtp_layers.is_empty())
                .map(|&k| Some(SpecConfig::new(SpecMethod::Mtp, k))),
        )
        .collect()
}

/// Every shape of `engine` on GPU `gi` that starts, as profiles (their indices in `b`); the
/// others counted with their reasons.
fn profiles(
    b: &mut Built,
    model: &ModelDesc,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    specs: &[Option<SpecConfig>],
) -> Vec<usize> {
    let g = &spec.gpus[gi].gpu;
    let mut local = Vec::new();
    for par in space::shapes(model, Parallel::node_size(g), spec.max_gpus) {
        let n = specs.len() as u64;
        if let Err(e) = par.check(model, g, engine) {
            b.considered += n;
            refuse(&mut b.refused, e, n);
            continue;
        }
        for s in specs {
            let cfg = EngineConfig {
                engine,
                tp: par.tp,
                dp: par.dp,
                ep: par.ep,
                pp: par.pp,
                nodes: 0,
                spec: *s,
                frontend_overhead_ms: spec
                    .frontend_overhead_ms
                    .unwrap_or(engine_frontend_overhead_ms(engine)),
                ..spec.base.clone()
            };
            let lengths = (spec.input_len, spec.output_len);
            match Profile::new(model, g, &cfg, &spec.eff, lengths) {
                Ok(p) if p.max_batch > 0 => {
                    b.profiles.push(p);
                    local.push(b.profiles.len() - 1);
                }
                Ok(_) => {
                    b.considered += 1;
                    let e = CalcError::BadValue {
                        key: "num_gpu_blocks".into(),
                        found: Phrase::verbatim("0"),
                        expected: Phrase::tr("exp_sim_kv_blocks"),
                    };
                    refuse(&mut b.refused, e, 1);
                }
                Err(e) => {
                    b.considered += 1;
                    refuse(&mut b.refused, e, 1);
                }
            }
        }
    }
    local
}

impl Built {
    /// Adds a candidate and its screened points.
    fn add(&mut self, c: Candidate, which: (usize, usize, Option<usize>), ests: Vec<Estimate>) {
        self.candidates.push(c);
        self.which.push(which);
        let ci = (self.candidates.len() - 1) as u32;
        self.raws
            .extend(ests.into_iter().map(|est| Raw { candidate: ci, est }));
    }
}

fn candidate(
    g: &SearchGpu,
    engine: EngineKind,
    layout: Layout,
    p: &Profile,
    gpus: u64,
) -> Candidate {
    Candidate {
        gpu: g.gpu.id.clone(),
        gpu_name: g.gpu.name.clone(),
        usd_per_gpu_hour: g.usd_per_gpu_hour,
        engine,
        layout,
        spec: specs_of(p),
        gpus,
    }
}

/// Each profile as an aggregated instance.
fn add_aggregated(
    b: &mut Built,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    local: &[usize],
) {
    for &pi in local {
        b.considered += 1;
        let p = &b.profiles[pi];
        let layout = Layout::Aggregated {
            par: p.replica.parallel(),
        };
        let c = candidate(&spec.gpus[gi], engine, layout, p, p.gpus());
        let ests = screen::aggregated(p, spec.output_len);
        b.add(c, (gi, pi, None), ests);
    }
}

/// Each pair of a prefill profile (without speculation, within one node) and a decode
/// profile, at each worker ratio.
fn add_disaggregated(
    b: &mut Built,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    local: &[usize],
) {
    let g = &spec.gpus[gi];
    let node = Parallel::node_size(&g.gpu);
    let prefills: Vec<usize> = local
        .iter()
        .copied()
        .filter(|&i| {
            let p = &b.profiles[i];
            specs_of(p).is_none() && p.gpus() <= node
        })
        .collect();
    let handoff_s = DEFAULT_KV_TRANSFER_LATENCY_MS / 1e3;
    for &pi in &prefills {
        for &di in local {
            let (gp, gd) = (b.profiles[pi].gpus(), b.profiles[di].gpus());
            for (x, y) in space::ratios(gp, gd, spec.max_gpus) {
                b.considered += 1;
                let gpus = x * gp + y * gd;
                let link = KvLink::auto(gpus, &g.gpu);
                let (pre, dec) = (&b.profiles[pi], &b.profiles[di]);
                let ests = screen::disaggregated(
                    pre,
                    dec,
                    (x, y),
                    (link.bytes_per_s(&g.gpu), handoff_s),
                    spec.output_len,
                );
                let layout = Layout::Disaggregated {
                    prefill: pre.replica.parallel(),
                    decode: dec.replica.parallel(),
                    prefill_workers: x,
                    decode_workers: y,
                    link,
                };
                let c = candidate(g, engine, layout, dec, gpus);
                b.add(c, (gi, pi, Some(di)), ests);
            }
        }
    }
}

/// The screen over every configuration (module docs, step 1).
pub(super) fn build(
    model: &ModelDesc,
    spec: &SearchSpec,
    progress: &mut dyn FnMut(Progress),
) -> Built {
    let mut b = Built {
        candidates: Vec::new(),
        which: Vec::new(),
        profiles: Vec::new(),
        raws: Vec::new(),
        considered: 0,
        refused: Vec::new(),
    };
    let specs = spec_variants(model, spec);
    let total = (spec.gpus.len() * spec.engines.len()) as u64;
    let mut done = 0;
    for gi in 0..spec.gpus.len() {
        for &engine in &spec.engines {
            let local = profiles(&mut b, model, spec, (gi, engine), &specs);
            if spec.aggregated {
                add_aggregated(&mut b, spec, (gi, engine), &local);
            }
            if spec.disaggregated {
                add_disaggregated(&mut b, spec, (gi, engine), &local);
            }
            done += 1;
            progress(Progress {
                stage: "screen",
                done,
                total,
            });
        }
    }
    b
}

fn specs_of(p: &Profile) -> Option<SpecConfig> {
    p.replica.resolved().spec
}

impl Built {
    /// Screened point `i` as a plan point.
    pub(super) fn point(&self, i: usize, spec: &SearchSpec) -> PlanPoint {
        let r = self.raws[i];
        let ci = r.candidate as usize;
        let node = Parallel::node_size(&spec.gpus[self.which[ci].0].gpu);
        point(r, &self.candidates[ci], node, spec)
    }
}
