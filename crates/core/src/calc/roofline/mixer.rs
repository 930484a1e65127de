//! The operators of a layer's mixer, per GPU under tensor parallelism: attention (GQA/MHA with
//! causal or sliding-window pairs, MLA with its latent read once) and the recurrent mixers
//! (Mamba, short convolution, linear attention) with their state.

use super::op::{OpCost, Pass, Phase, Step};
use crate::base::error::CalcError;
use crate::calc::memory::kv_heads_per_rank;
use crate::calc::tp::{check_heads as check_tp, state_elems_per_gpu};
use crate::model::Mixer;

/// (query, key) pairs per sequence per head: prefill `Σ_{i=1..S} min(i, W)` (causal), decode
/// `min(C, W)`.
pub(super) fn attention_pairs(w: &Pass, window: Option<u64>) -> f64 {
    let s = w.seq as f64;
    match (w.phase, window) {
        (Phase::Decode, None) => s,
        (Phase::Decode, Some(win)) => s.min(win as f64),
        (Phase::Prefill, None) => s * (s + 1.0) / 2.0,
        (Phase::Prefill, Some(win)) => {
            let wf = (win as f64).min(s);
            // Σ_{i≤W} i + (S − W)·W
            wf * (wf + 1.0) / 2.0 + (s - wf) * wf
        }
    }
}

/// Keys read per sequence from the cache (flash-attention model: each key once per step).
fn keys_read(w: &Pass, window: Option<u64>) -> f64 {
    let s = w.seq as f64;
    window.map_or(s, |win| s.min(win as f64))
}

/// The GQA/MQA attention operators (`op_attn_q/k/v`, `op_attn_score`, `op_attn_av`,
/// `op_attn_o`) for `(num_heads, kv_heads)` heads of `(head_dim, v_head_dim)` dims, after
/// checking the heads split across `tp`.
fn gqa_ops(
    st: &Step,
    tp: u64,
    (num_heads, kv_heads): (u64, u64),
    (head_dim, v_head_dim): (u64, u64),
    window: Option<u64>,
) -> Result<Vec<OpCost>, CalcError> {
    let (w, b, t, hf) = (st.w, st.b, st.t, st.hf);
    let mut ops = Vec::new();
    check_tp(num_heads, kv_heads, tp)?;
    let hr = num_heads / tp;
    let hkv = kv_heads_per_rank(kv_heads, tp);
    let (d, dv) = (head_dim, v_head_dim);
    ops.push(st.linear("op_attn_q", hf, hr as f64 * d as f64));
    ops.push(st.linear("op_attn_k", hf, hkv as f64 * d as f64));
    ops.push(st.linear("op_attn_v", hf, hkv as f64 * dv as f64));
    let pairs = attention_pairs(w, window);
    let keys = keys_read(w, window);
    let (hrf, hkvf, df, dvf) = (hr as f64, hkv as f64, d as f64, dv as f64);
    let mut score = st.unweighted(
        "op_attn_score",
        b * hrf * pairs * (2.0 * df + 5.0),
        t * hrf * df,
        b * keys * hkvf * df + t * hkvf * df,
    );
    score.window = window;
    ops.push(score);
    let mut av = st.unweighted(
        "op_attn_av",
        b * hrf * pairs * 2.0 * dvf,
        t * hrf * dvf,
        b * keys * hkvf * dvf + t * hkvf * dvf,
    );
    av.window = window;
    ops.push(av);
    ops.push(st.linear("op_attn_o", hr as f64 * dv as f64, hf));
    Ok(ops)
}

/// MLA's `op_attn_score` and `op_attn_av` for `hr` heads per GPU: the naive form in prefill
/// (q and k of `dqk` dims, v of `dv` dims), the absorbed form in decode (scores over the
/// `latent = kv_lora_rank + qk_rope_head_dim` latent, read once for all heads).
fn mla_score_av(st: &Step, hr: u64, dqk: f64, (r, rope, dv): (u64, u64, u64)) -> [OpCost; 2] {
    let (w, b, t) = (st.w, st.b, st.t);
    let pairs = attention_pairs(w, None);
    let keys = keys_read(w, None);
    let hrf = hr as f64;
    let latent = r as f64 + rope as f64;
    let (score, av) = match st.ph {
        Phase::Prefill => (
            st.unweighted(
                "op_attn_score",
                b * hrf * pairs * (2.0 * dqk + 5.0),
                t * hrf * dqk * 2.0,
                t * latent,
            ),
            st.unweighted(
                "op_attn_av",
                b * hrf * pairs * 2.0 * dv as f64,
                t * hrf * dv as f64 * 2.0,
                0.0,
            ),
        ),
        Phase::Decode => (
            st.unweighted(
                "op_attn_score",
                b * hrf * pairs * (2.0 * latent + 5.0),
                t * hrf * latent,
                b * keys * latent + t * latent,
            ),
            st.unweighted(
                "op_attn_av",
                b * hrf * pairs * 2.0 * r as f64,
                t * hrf * r as f64,
                0.0,
            ),
        ),
    };
    [score, av]
}

/// The MLA operators (`op_attn_q_a/q_b` or `op_attn_q`, `op_attn_kv_a/kv_b`, score, weighted
/// sum, `op_attn_o`), after checking the heads split across `tp`; `dims` is
/// `(kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim)`.
fn mla_ops(
    st: &Step,
    tp: u64,
    num_heads: u64,
    q_lora_rank: Option<u64>,
    dims: (u64, u64, u64, u64),
) -> Result<Vec<OpCost>, CalcError> {
    let hf = st.hf;
    let mut ops = Vec::new();
    check_tp(num_heads, 0, tp)?;
    let hr = num_heads / tp;
    let (r, rope, nope, dv) = dims;
    let dqk = nope as f64 + rope as f64;
    match q_lora_rank {
        Some(qr) => {
            ops.push(st.linear("op_attn_q_a", hf, qr as f64));
            ops.push(st.linear("op_attn_q_b", qr as f64, hr as f64 * dqk));
        }
        None => ops.push(st.linear("op_attn_q", hf, hr as f64 * dqk)),
    }
    ops.push(st.linear("op_attn_kv_a", hf, r as f64 + rope as f64));
    ops.push(st.linear(
        "op_attn_kv_b",
        r as f64,
        hr as f64 * (nope as f64 + dv as f64),
    ));
    ops.extend(mla_score_av(st, hr, dqk, (r, rope, dv)));
    ops.push(st.linear("op_attn_o", hr as f64 * dv as f64, hf));
    Ok(ops)
}

/// The SSM operators: `op_ssm_in`, `op_ssm_scan` (~9 FLOP per inner channel per state
/// element per token; decode reads and writes the recurrent state) and `op_ssm_out`.
fn ssm_ops(st: &Step, tp: u64, state_on_gpu: u64, d_inner: u64, d_state: u64) -> Vec<OpCost> {
    let (b, t, hf) = (st.b, st.t, st.hf);
    let mut ops = Vec::new();
    let di = d_inner.div_ceil(tp);
    ops.push(st.linear("op_ssm_in", hf, 2.0 * di as f64));
    let state = state_on_gpu as f64;
    // Prefill writes the final state once; decode reads and writes it every step.
    let state_traffic = if st.ph == Phase::Decode {
        2.0 * b * state
    } else {
        b * state
    };
    ops.push(st.unweighted(
        "op_ssm_scan",
        9.0 * t * di as f64 * d_state as f64,
        2.0 * t * di as f64,
        state_traffic,
    ));
    ops.push(st.linear("op_ssm_out", di as f64, hf));
    ops
}

/// The mixer's operators, by kind: GQA/MQA attention, MLA or SSM.
pub(super) fn mixer_ops(st: &Step, mixer: &Mixer, tp: u64) -> Result<Vec<OpCost>, CalcError> {
    match mixer {
        Mixer::Attention {
            num_heads,
            kv_heads,
            head_dim,
            v_head_dim,
            window,
        } => gqa_ops(
            st,
            tp,
            (*num_heads, *kv_heads),
            (*head_dim, *v_head_dim),
            *window,
        ),
        Mixer::Mla {
            num_heads,
            kv_lora_rank,
            q_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
            ..
        } => mla_ops(
            st,
            tp,
            *num_heads,
            *q_lora_rank,
            (
                *kv_lora_rank,
                *qk_rope_head_dim,
                *qk_nope_head_dim,
                *v_head_dim,
            ),
        ),
        Mixer::Ssm {
            d_inner, d_state, ..
        } => Ok(ssm_ops(
            st,
            tp,
            state_elems_per_gpu(mixer, tp),
            *d_inner,
            *d_state,
        )),
    }
}
