//! The scenario's URL form: [`Scenario::to_query`] writes it, [`Scenario::from_query`] reads it
//! back parameter by parameter (a bad one falls back to its default with a [`Notice`]).

use super::choice::*;
use super::notice::{coalesce, in_range, parse_count, parse_u64_in, Notice, NoticeKind};
use super::view_inputs::ViewInputs;
use crate::base::dtype::Dtype;
use crate::base::i18n::Lang;
use crate::base::url::{base64url_decode, base64url_encode, pct_decode, pct_encode};
use crate::calc::memory::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::hardware::catalog::{
    Catalog, CustomAccelerator, InterconnectPreset, Link, NAME_MAX_CHARS,
};

impl Scenario {
    /// The URL query (without `?`) that restores this scenario; defaults are left out.
    pub fn to_query(&self) -> String {
        self.query_parts::<true>().join("&")
    }

    /// [`Scenario::to_query`] without a pasted config (`cfg=`): for a preset or quick model
    /// the same query, made without linking the config's encoder (the embeds' first-answer
    /// module).
    pub fn query_without_config(&self) -> String {
        self.query_parts::<false>().join("&")
    }

    /// The query for a shareable link, and a notice when the pasted config had to be left
    /// out because the link would exceed [`MAX_LINK_QUERY_BYTES`].
    pub fn share_query(&self) -> (String, Option<Notice>) {
        let full = self.to_query();
        if full.len() <= MAX_LINK_QUERY_BYTES {
            return (full, None);
        }
        (
            self.query_without_config(),
            Some(Notice::new("cfg", NoticeKind::ConfigNotInLink)),
        )
    }

    /// The query's parameters; `CFG`: with a pasted config's (a constant, so a binary that
    /// never asks for it links no encoder).
    fn query_parts<const CFG: bool>(&self) -> Vec<String> {
        let d = Scenario::default();
        let mut q: Vec<String> = Vec::new();
        match &self.model {
            ModelSource::Preset(id) => {
                if self.model != d.model {
                    q.push(format!("model={}", pct_encode(id)));
                }
            }
            ModelSource::Pasted(text) => {
                if CFG {
                    q.push(format!("cfg={}", encode_config(text)));
                }
            }
            ModelSource::Quick { params, dtype } => {
                q.push(format!("params={params}"));
                q.push(format!("dtype={}", dtype.id()));
            }
        }
        if self.gpus != d.gpus {
            for g in &self.gpus {
                q.push(format!("gpu={}", pct_encode(&gpu_to_param(g))));
            }
        }
        if self.tp != d.tp {
            q.push(format!("tp={}", self.tp));
        }
        if self.interconnect != d.interconnect {
            q.push(format!("ic={}", link_id(self.interconnect)));
        }
        if self.context_len != d.context_len {
            q.push(format!("ctx={}", self.context_len));
        }
        if self.concurrency != d.concurrency {
            q.push(format!("n={}", self.concurrency));
        }
        if let Some(w) = self.weight_dtype {
            q.push(format!("wd={}", w.id()));
        }
        if let Some(k) = self.kv_dtype {
            q.push(format!("kvd={}", k.id()));
        }
        if self.include_mtp {
            q.push("mtp=1".to_string());
        }
        if let BudgetRule::Vllm {
            gpu_memory_utilization,
            block_size,
        } = self.budget
        {
            q.push("rule=vllm".to_string());
            q.push(format!("gmu={}", fmt_f64(gpu_memory_utilization)));
            q.push(format!("bs={block_size}"));
        }
        if self.perf.input_len != d.perf.input_len {
            q.push(format!("in={}", self.perf.input_len));
        }
        if self.perf.output_len != d.perf.output_len {
            q.push(format!("out={}", self.perf.output_len));
        }
        if self.perf.batch != d.perf.batch {
            q.push(format!("batch={}", self.perf.batch));
        }
        q.extend(self.views.query_parts());
        if let Some(l) = self.lang {
            q.push(format!("lang={}", l.code()));
        }
        if let ViewMode::Embed(w) = self.view {
            q.push(format!("embed={}", w.id()));
            if !self.embed_inputs {
                q.push("embed_inputs=0".to_string());
            }
        }
        q
    }

    /// Reads a URL query (with or without the leading `?`). Never fails: each parameter is
    /// read on its own, and one that cannot be used keeps its default and adds a notice.
    pub fn from_query(query: &str) -> (Scenario, Vec<Notice>) {
        let mut s = Scenario::default();
        let mut notices = Vec::new();
        let query = clip_query(query.strip_prefix('?').unwrap_or(query), &mut notices);
        let mut later = Deferred::default();
        for pair in query.split('&').filter(|p| !p.is_empty()).take(200) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let key = pct_decode(k);
            let val = pct_decode(v);
            let key = key.as_str();
            if let Err(kind) = s.read_param(&mut later, key, val.trim(), v) {
                notices.push(Notice::new(key, kind));
            }
        }
        s.apply_deferred(later, &mut notices);
        (s, coalesce(notices))
    }

    /// Reads one decoded parameter `key` = `val` (`raw` is the undecoded value, for `cfg`);
    /// the model, GPU and budget parameters go to their own readers.
    fn read_param(
        &mut self,
        later: &mut Deferred,
        key: &str,
        val: &str,
        raw: &str,
    ) -> Result<(), NoticeKind> {
        match key {
            "v" => match val.parse::<u32>() {
                Ok(n) if n <= QUERY_VERSION => Ok(()),
                Ok(_) => Err(NoticeKind::NewerVersion),
                Err(_) => Err(NoticeKind::Invalid),
            },
            "model" | "cfg" | "params" | "dtype" | "gpu" => {
                self.read_model_param(later, key, val, raw)
            }
            "rule" | "gmu" | "bs" => later.read_budget_param(key, val),
            _ => self.read_setting_param(key, val),
        }
    }

    /// Reads the model (`model`, `cfg`, `params`, `dtype`) and GPU (`gpu`) parameters.
    fn read_model_param(
        &mut self,
        later: &mut Deferred,
        key: &str,
        val: &str,
        raw: &str,
    ) -> Result<(), NoticeKind> {
        match key {
            "model" => {
                if valid_id(val) {
                    self.model = ModelSource::Preset(val.to_string());
                    Ok(())
                } else {
                    Err(NoticeKind::Invalid)
                }
            }
            "cfg" => {
                self.model = ModelSource::Pasted(decode_config(raw)?);
                Ok(())
            }
            "params" => match parse_count(val) {
                Some(n) if in_range(n, limits::PARAMS) => {
                    later.quick_params = Some(n);
                    Ok(())
                }
                Some(_) => Err(NoticeKind::OutOfRange),
                None => Err(NoticeKind::Invalid),
            },
            "dtype" => {
                later.quick_dtype = Some(Dtype::parse(val).map_err(|_| NoticeKind::Invalid)?);
                Ok(())
            }
            _ => {
                later.gpu_seen = true;
                match gpu_from_param(val) {
                    Some(_) if later.gpus.len() >= MAX_GPUS => Err(NoticeKind::TooMany),
                    Some(g) => {
                        if !later.gpus.contains(&g) {
                            later.gpus.push(g);
                        }
                        Ok(())
                    }
                    None => Err(NoticeKind::Invalid),
                }
            }
        }
    }

    /// Reads the parameters that set one field each (sizes, precisions, lengths, language,
    /// embed mode, the views' inputs); an unknown key is reported.
    fn read_setting_param(&mut self, key: &str, val: &str) -> Result<(), NoticeKind> {
        match key {
            "tp" => self.tp = u32::try_from(parse_u64_in(val, limits::TP)?).unwrap_or(1),
            "ic" => self.interconnect = link_from_id(val).ok_or(NoticeKind::Invalid)?,
            "ctx" => self.context_len = parse_u64_in(val, limits::CONTEXT_LEN)?,
            "n" => self.concurrency = parse_u64_in(val, limits::CONCURRENCY)?,
            "wd" => {
                self.weight_dtype = Some(Dtype::parse(val).map_err(|_| NoticeKind::Invalid)?);
            }
            "kvd" => self.kv_dtype = Some(Dtype::parse(val).map_err(|_| NoticeKind::Invalid)?),
            "mtp" => match val {
                "0" => self.include_mtp = false,
                "1" => self.include_mtp = true,
                _ => return Err(NoticeKind::Invalid),
            },
            "in" => self.perf.input_len = parse_u64_in(val, limits::PERF_LEN)?,
            "out" => self.perf.output_len = parse_u64_in(val, limits::PERF_LEN)?,
            "batch" => self.perf.batch = parse_u64_in(val, limits::BATCH)?,
            "lang" => self.lang = Some(Lang::from_code(val).ok_or(NoticeKind::Invalid)?),
            "embed" => {
                self.view = ViewMode::Embed(EmbedWidget::from_id(val).ok_or(NoticeKind::Invalid)?);
            }
            "embed_inputs" => match val {
                "0" => self.embed_inputs = false,
                "1" => self.embed_inputs = true,
                _ => return Err(NoticeKind::Invalid),
            },
            k if ViewInputs::owns(k) => self.views.set(k, val)?,
            _ => return Err(NoticeKind::UnknownParam),
        }
        Ok(())
    }

    /// Applies what depends on several parameters once all are read: the quick model, the
    /// GPU list, the embed-only input strip and the vLLM budget.
    fn apply_deferred(&mut self, later: Deferred, notices: &mut Vec<Notice>) {
        if let Some(params) = later.quick_params {
            self.model = ModelSource::Quick {
                params,
                dtype: later.quick_dtype.unwrap_or(Dtype::Bf16),
            };
        } else if later.quick_dtype.is_some() {
            notices.push(Notice::new("params", NoticeKind::Invalid));
        }
        if later.gpu_seen && !later.gpus.is_empty() {
            self.gpus = later.gpus;
        }
        // The input strip only exists in embed mode; the full page always has its inputs.
        if self.view == ViewMode::Full {
            self.embed_inputs = true;
        }
        if later.rule_vllm == Some(true) {
            // vLLM's defaults.
            self.budget = BudgetRule::Vllm {
                gpu_memory_utilization: later.gmu.unwrap_or(DEFAULT_GPU_MEMORY_UTILIZATION),
                block_size: later.bs.unwrap_or(DEFAULT_BLOCK_SIZE as u32),
            }
        }
    }

    /// Makes catalog accelerator `id` the first compared GPU (the embeds' GPU select): moved
    /// to the front if already compared, otherwise it replaces the first one; the others stay.
    pub fn set_first_gpu(&mut self, id: &str) {
        let g = GpuChoice::Catalog(id.to_string());
        if let Some(pos) = self.gpus.iter().position(|x| *x == g) {
            self.gpus.swap(0, pos);
        } else if let Some(first) = self.gpus.first_mut() {
            *first = g;
        } else {
            self.gpus.push(g);
        }
    }

    /// Drops GPUs and presets that the catalog / preset list do not know (an outdated link),
    /// falling back to the defaults, with a notice for each.
    pub fn sanitize(
        &mut self,
        catalog: &Catalog,
        preset_known: impl Fn(&str) -> bool,
    ) -> Vec<Notice> {
        let mut notices = Vec::new();
        if let ModelSource::Preset(id) = &self.model {
            if !preset_known(id) {
                notices.push(Notice::new(id, NoticeKind::UnknownId));
                self.model = Scenario::default().model;
            }
        }
        let before = self.gpus.len();
        let mut kept = Vec::with_capacity(before);
        for g in self.gpus.drain(..) {
            match &g {
                GpuChoice::Catalog(id) if catalog.get(id).is_err() => {
                    notices.push(Notice::new(id, NoticeKind::UnknownId));
                }
                _ => kept.push(g),
            }
        }
        if kept.is_empty() {
            kept = Scenario::default()
                .gpus
                .into_iter()
                .filter(|g| match g {
                    GpuChoice::Catalog(id) => catalog.get(id).is_ok(),
                    GpuChoice::Custom(_) => true,
                })
                .collect();
            if kept.is_empty() {
                kept.push(GpuChoice::Custom(default_custom()));
            }
        }
        self.gpus = kept;
        notices
    }
}

/// Cuts a query longer than [`MAX_QUERY_BYTES`] at a character boundary, with a notice.
fn clip_query<'q>(query: &'q str, notices: &mut Vec<Notice>) -> &'q str {
    if query.len() <= MAX_QUERY_BYTES {
        return query;
    }
    notices.push(Notice::new("?", NoticeKind::QueryTooLong));
    let mut end = MAX_QUERY_BYTES;
    while end > 0 && !query.is_char_boundary(end) {
        end -= 1;
    }
    query.get(..end).unwrap_or("")
}

/// Parameters that take effect together after the whole query is read (see
/// `Scenario::apply_deferred`).
#[derive(Default)]
struct Deferred {
    gpus: Vec<GpuChoice>,
    gpu_seen: bool,
    quick_params: Option<u64>,
    quick_dtype: Option<Dtype>,
    rule_vllm: Option<bool>,
    gmu: Option<f64>,
    bs: Option<u32>,
}

impl Deferred {
    /// Reads the budget-rule parameters `rule`, `gmu` and `bs`.
    fn read_budget_param(&mut self, key: &str, val: &str) -> Result<(), NoticeKind> {
        match key {
            "rule" => match val {
                "vllm" => self.rule_vllm = Some(true),
                "textbook" => self.rule_vllm = Some(false),
                _ => return Err(NoticeKind::Invalid),
            },
            "gmu" => match val.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= limits::GMU.0 && x <= limits::GMU.1 => {
                    self.gmu = Some(x);
                }
                Ok(_) => return Err(NoticeKind::OutOfRange),
                Err(_) => return Err(NoticeKind::Invalid),
            },
            _ => self.bs = u32::try_from(parse_u64_in(val, limits::BLOCK_SIZE)?).ok(),
        }
        Ok(())
    }
}

fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn fmt_f64(x: f64) -> String {
    // Shortest text that parses back to the same f64 (Rust's Display guarantees this).
    format!("{x}")
}

fn gpu_to_param(g: &GpuChoice) -> String {
    match g {
        GpuChoice::Catalog(id) => id.clone(),
        GpuChoice::Custom(c) => format!("custom:{}", c.to_query()),
    }
}

fn gpu_from_param(v: &str) -> Option<GpuChoice> {
    if let Some(rest) = v.strip_prefix("custom:") {
        // Room for a NAME_MAX_CHARS-character name percent-encoded at up to 12 bytes a character.
        if rest.len() > 2000 {
            return None;
        }
        let mut c = CustomAccelerator::from_query(rest).ok()?;
        // The same cut the form applies, so a link the app wrote is always read back whole.
        c.name = c.name.chars().take(NAME_MAX_CHARS).collect();
        // Only values the form would accept travel in a link.
        c.validate().ok()?;
        return Some(GpuChoice::Custom(c));
    }
    let id = v.to_ascii_lowercase();
    valid_id(&id).then_some(GpuChoice::Catalog(id))
}

/// The URL id of a link choice: `own` or the preset's id.
fn link_id(l: Link) -> &'static str {
    match l {
        Link::Own => "own",
        Link::Preset(p) => p.id(),
    }
}

fn link_from_id(s: &str) -> Option<Link> {
    if s == "own" {
        Some(Link::Own)
    } else {
        InterconnectPreset::parse(s).map(Link::Preset)
    }
}

/// Minifies JSON text (keeps the raw text when it is not JSON) and encodes it as base64url.
fn encode_config(text: &str) -> String {
    let compact =
        match serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')) {
            Ok(v) => serde_json::to_string(&v).unwrap_or_else(|_| text.to_string()),
            Err(_) => text.to_string(),
        };
    base64url_encode(compact.as_bytes())
}

fn decode_config(v: &str) -> Result<String, NoticeKind> {
    // base64url never needs percent-decoding, but tolerate a link that escaped it.
    let v = pct_decode(v);
    if v.len() > MAX_CFG_BYTES / 3 * 4 + 4 {
        return Err(NoticeKind::OutOfRange);
    }
    let bytes = base64url_decode(v.trim()).ok_or(NoticeKind::Invalid)?;
    let text = String::from_utf8(bytes).map_err(|_| NoticeKind::Invalid)?;
    if text.trim().is_empty() {
        return Err(NoticeKind::Invalid);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[track_caller]
    fn round_trip(s: &Scenario) {
        let q = s.to_query();
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{q}: {notices:?}");
        assert_eq!(&back, s, "query {q}");
    }

    fn llama_text() -> String {
        include_str!("../../../../data/presets/meta-llama__Llama-2-7b-hf.json").to_string()
    }

    #[test]
    fn set_first_gpu_swaps_replaces_or_adds() {
        let cat = |id: &str| GpuChoice::Catalog(id.into());
        let mut s = Scenario {
            gpus: vec![cat("a10g"), cat("l40s"), cat("h100-sxm")],
            ..Scenario::default()
        };
        // Already compared: moved to the front, nothing lost.
        s.set_first_gpu("h100-sxm");
        assert_eq!(s.gpus, vec![cat("h100-sxm"), cat("l40s"), cat("a10g")]);
        // Not compared: replaces the first, the count stays.
        s.set_first_gpu("mi300x");
        assert_eq!(s.gpus, vec![cat("mi300x"), cat("l40s"), cat("a10g")]);
        // None compared: added.
        s.gpus.clear();
        s.set_first_gpu("a10g");
        assert_eq!(s.gpus, vec![cat("a10g")]);
    }

    #[test]
    fn embed_inputs_only_in_embed_mode() {
        let (s, n) = Scenario::from_query("embed=kv&embed_inputs=0");
        assert!(n.is_empty(), "{n:?}");
        assert!(!s.embed_inputs);
        assert_eq!(s.to_query(), "embed=kv&embed_inputs=0");
        // The full page always has its inputs: the flag is dropped, and so is it from the
        // back-link to the full page.
        let (mut s2, _) = Scenario::from_query("embed_inputs=0");
        assert!(s2.embed_inputs);
        s2.view = ViewMode::Full;
        assert_eq!(s2.to_query(), "");
        let (_, bad) = Scenario::from_query("embed=kv&embed_inputs=no");
        assert_eq!(bad.len(), 1, "{bad:?}");
    }

    #[test]
    fn default_is_an_empty_query() {
        assert_eq!(Scenario::default().to_query(), "");
        round_trip(&Scenario::default());
    }

    #[test]
    fn round_trips() {
        let mut s = Scenario {
            model: ModelSource::Quick {
                params: 7_000_000_000,
                dtype: Dtype::Fp8,
            },
            gpus: vec![
                GpuChoice::Catalog("h100-sxm".into()),
                GpuChoice::Custom(CustomAccelerator {
                    name: "My chip | <b>&amp; 한글;=%".into(),
                    memory_gib: 23.5,
                    bandwidth_gbps: 0.1 + 1.2,
                    bf16_tflops: 0.02,
                    fp8_tflops: Some(250.0),
                    price_usd_per_hour: Some(1.006),
                    tdp_w: None,
                }),
            ],
            tp: 8,
            interconnect: Link::Preset(InterconnectPreset::NvlinkSwitch),
            context_len: 131_072,
            concurrency: 1,
            weight_dtype: Some(Dtype::Int4),
            kv_dtype: Some(Dtype::Fp8),
            budget: BudgetRule::Vllm {
                gpu_memory_utilization: 0.85,
                block_size: 32,
            },
            perf: PerfInputs {
                input_len: 1,
                output_len: 10_000_000,
                batch: 64,
            },
            lang: Some(Lang::Ko),
            view: ViewMode::Embed(EmbedWidget::Roofline),
            embed_inputs: false,
            include_mtp: true,
            views: ViewInputs::default(),
        };
        round_trip(&s);
        s.embed_inputs = true;
        round_trip(&s);
        s.embed_inputs = false;
        s.model = ModelSource::Preset("Qwen__Qwen3-8B".into());
        round_trip(&s);
        for w in EmbedWidget::ALL {
            s.view = ViewMode::Embed(*w);
            round_trip(&s);
        }
        for c in InterconnectPreset::ALL {
            s.interconnect = Link::Preset(*c);
            round_trip(&s);
        }
    }

    #[test]
    fn pasted_config_round_trips_minified() {
        let text = llama_text();
        let minified = serde_json::to_string(
            &serde_json::from_str::<serde_json::Value>(&text).unwrap_or_default(),
        )
        .unwrap_or_default();
        let s = Scenario {
            model: ModelSource::Pasted(minified.clone()),
            ..Scenario::default()
        };
        round_trip(&s);
        // Pretty-printed text comes back as the same JSON value, minified.
        let s2 = Scenario {
            model: ModelSource::Pasted(text),
            ..Scenario::default()
        };
        let (back, _) = Scenario::from_query(&s2.to_query());
        assert_eq!(back.model, ModelSource::Pasted(minified));
        // Not JSON: kept verbatim.
        let s3 = Scenario {
            model: ModelSource::Pasted("{ broken json, 한글".into()),
            ..Scenario::default()
        };
        round_trip(&s3);
    }

    #[test]
    fn long_config_is_left_out_of_the_share_link() {
        let s = Scenario {
            model: ModelSource::Pasted(format!("{{\"x\":\"{}\"}}", "a".repeat(20_000))),
            ..Scenario::default()
        };
        let (q, notice) = s.share_query();
        assert!(q.len() <= MAX_LINK_QUERY_BYTES);
        assert!(!q.contains("cfg="));
        assert_eq!(notice.map(|n| n.kind), Some(NoticeKind::ConfigNotInLink));
        let short = Scenario::default();
        assert_eq!(short.share_query(), (String::new(), None));
    }

    #[test]
    fn each_bad_parameter_falls_back_alone() {
        let (s, notices) = Scenario::from_query(
            "?ctx=abc&n=8&tp=0&gmu=7&rule=vllm&bs=16&wd=fp7&lang=fr&zzz=1&gpu=l40s",
        );
        let d = Scenario::default();
        assert_eq!(s.context_len, d.context_len);
        assert_eq!(s.concurrency, 8);
        assert_eq!(s.tp, 1);
        assert_eq!(
            s.budget,
            BudgetRule::Vllm {
                gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
                block_size: 16
            }
        );
        assert_eq!(s.weight_dtype, None);
        assert_eq!(s.lang, None);
        assert_eq!(s.gpus, vec![GpuChoice::Catalog("l40s".into())]);
        let named: Vec<(&str, NoticeKind)> =
            notices.iter().map(|n| (n.param.as_str(), n.kind)).collect();
        assert_eq!(
            named,
            vec![
                ("ctx", NoticeKind::Invalid),
                ("tp", NoticeKind::OutOfRange),
                ("gmu", NoticeKind::OutOfRange),
                ("wd", NoticeKind::Invalid),
                ("lang", NoticeKind::Invalid),
                ("zzz", NoticeKind::UnknownParam),
            ]
        );
        // Every notice reads as a sentence naming its parameter, in both languages.
        for n in &notices {
            for l in Lang::ALL {
                let m = n.message(*l);
                assert!(m.contains(&n.param), "{m}");
                assert!(!m.contains("{param}"));
            }
        }
    }

    #[test]
    fn huge_and_hostile_values() {
        for q in [
            "ctx=18446744073709551616",
            "ctx=1e308",
            "ctx=-1",
            "ctx=Infinity",
            "ctx=NaN",
            "ctx=1.5",
            "n=0",
            "params=1e16",
            "gmu=NaN",
            "gmu=inf",
            "tp=4294967296",
            "gpu=custom:name=x;memory_gib=1e309;bandwidth_gbps=1;bf16_tflops=1",
            "gpu=custom:name=x;memory_gib=1",
            "cfg=%%%",
            "cfg=A",
            "cfg=____",
            "v=99",
            "embed=<script>",
        ] {
            let (s, notices) = Scenario::from_query(q);
            assert_eq!(notices.len(), 1, "{q}: {notices:?}");
            let mut d = Scenario::default();
            if q.starts_with("gpu=") {
                d.gpus = s.gpus.clone();
                assert_eq!(s.gpus, Scenario::default().gpus, "{q}");
            }
            assert_eq!(s, d, "{q}");
        }
        // Too many GPUs: the first four are kept.
        let (s, notices) = Scenario::from_query("gpu=a&gpu=b&gpu=c&gpu=d&gpu=e");
        assert_eq!(s.gpus.len(), MAX_GPUS);
        assert_eq!(notices.len(), 1);
        // An enormous query is cut, not refused.
        let big = format!("ctx=2048&x={}", "é".repeat(MAX_QUERY_BYTES));
        let (s, notices) = Scenario::from_query(&big);
        assert_eq!(s.context_len, 2048);
        assert!(notices.iter().any(|n| n.kind == NoticeKind::QueryTooLong));
    }

    #[test]
    fn repeated_bad_parameters_give_one_notice_each_with_a_count() {
        // A garbled link: 80 copies of one bad parameter, 3 of an unknown one, one good value.
        let mut q: Vec<String> = (0..80).map(|i| format!("ctx=bad{i}")).collect();
        q.extend((0..3).map(|_| "zz=1".to_string()));
        q.push("batch=8".into());
        let (s, notices) = Scenario::from_query(&q.join("&"));
        assert_eq!(s.perf.batch, 8);
        let seen: Vec<(&str, u32)> = notices
            .iter()
            .map(|n| (n.param.as_str(), n.count))
            .collect();
        assert_eq!(seen, vec![("ctx", 80), ("zz", 3)]);
        for lang in [Lang::En, Lang::Ko] {
            let m = notices[0].message(lang);
            assert!(m.contains("\"ctx\"") && m.contains("80"), "{m}");
            assert!(!notices[1].message(lang).contains("{"), "{lang:?}");
        }
        // A single occurrence reads exactly as before (no count).
        let (_, one) = Scenario::from_query("ctx=bad");
        assert_eq!(one[0].count, 1);
        assert!(!one[0].message(Lang::En).contains("×"));
    }

    #[test]
    fn truncated_queries_never_panic() {
        let mut s = Scenario {
            model: ModelSource::Pasted(llama_text()),
            budget: BudgetRule::Vllm {
                gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
                block_size: DEFAULT_BLOCK_SIZE as u32,
            },
            ..Scenario::default()
        };
        s.gpus.push(GpuChoice::Custom(default_custom()));
        let q = s.to_query();
        for end in 0..q.len() {
            if let Some(prefix) = q.get(..end) {
                let _ = Scenario::from_query(prefix);
            }
        }
    }

    #[test]
    fn counts_and_base64() {
        assert_eq!(parse_count("4,096"), Some(4096));
        assert_eq!(parse_count("7b"), Some(7_000_000_000));
        assert_eq!(parse_count("7e9"), Some(7_000_000_000));
        assert_eq!(parse_count("1.5k"), Some(1500));
        assert_eq!(parse_count("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_count("18446744073709551616"), None);
        assert_eq!(parse_count("1.5"), None);
        assert_eq!(parse_count("-3"), None);
        for data in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\x00\xfe"] {
            assert_eq!(
                base64url_decode(&base64url_encode(data)).as_deref(),
                Some(data)
            );
        }
        // RFC 4648 test vector.
        assert_eq!(base64url_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url_decode("Zm9v!"), None);
        assert_eq!(base64url_decode("Z"), None);
    }

    proptest! {
        #[test]
        fn arbitrary_queries_never_panic(q in ".{0,300}") {
            let (s, _) = Scenario::from_query(&q);
            prop_assert!(s.gpus.len() <= MAX_GPUS && !s.gpus.is_empty());
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let q = String::from_utf8_lossy(&b);
            let _ = Scenario::from_query(&q);
            let _ = base64url_decode(&q);
        }

        #[test]
        fn numeric_round_trip(ctx in 1u64..=10_000_000, n in 1u64..=1_000_000, tp in 1u32..=1024,
                              gmu in 0.05f64..=1.0, bs in 1u32..=1024, params in 1_000u64..=1_000_000_000_000_000) {
            let s = Scenario {
                model: ModelSource::Quick { params, dtype: Dtype::Bf16 },
                context_len: ctx, concurrency: n, tp,
                budget: BudgetRule::Vllm { gpu_memory_utilization: gmu, block_size: bs },
                ..Scenario::default()
            };
            let (back, notices) = Scenario::from_query(&s.to_query());
            prop_assert!(notices.is_empty());
            prop_assert_eq!(back, s);
        }
    }
}
