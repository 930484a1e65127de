//! TensorRT-LLM's scheduler with its default capacity policy, `GUARANTEED_NO_EVICT`
//! (`capacityScheduler.cpp`, `microBatchScheduler.cpp`; `sim::engines` gives the sources):
//!
//! 1. Every request already generating is scheduled, one token each, while the token budget
//!    (`max_num_tokens`) and the seats (`max_batch_size`) last; the blocks each will need up
//!    to its last token stay reserved for it.
//! 2. Then prompts: a request whose prompt is under way (with chunked prefill), then waiting
//!    requests in arrival order, each admitted only when blocks for its whole prompt and output
//!    are free beside the running requests' reservation; the queue stops at the first that
//!    does not fit. Without chunked prefill (the default) a prompt runs whole in one step and
//!    the step stops at the first that does not fit the token budget left; with it, a prompt
//!    is cut to whole blocks of what is left.
//!
//! Nothing is ever preempted: the reservation guarantees every admitted request its blocks.
//!
//! Under attention DP with balancing (`attention_dp_config.enable_balance`, `timeout_iters`
//! T), while requests decode, prompts are let in only when every rank has one waiting or T
//! steps after they were last let in (`py_executor.py` `_balance_adp_requests`, with
//! `batching_wait_iters` 0), or at once when nothing decodes. The ranks other than the
//! simulated one are not simulated (`sim::parallel`): each is taken to have a prompt waiting
//! as often as this one has had lately (`q`, the share of the last ~32 steps with a prompt
//! waiting here), so every rank has one with odds `q^dp` per step; those odds accumulate, and
//! prompts are let in each time they add up to one (deterministic: no random draw). Under a
//! light load prompts thus wait for the timeout; under a backlog they go in at once.
//!
//! Without attention DP, batch waiting (`batch_wait_timeout_iters` T, `batch_wait_max_tokens_ratio`
//! R; off by default) holds prompts back while requests decode: a step lets them in when T
//! steps have waited or when their tokens and the decodes' reach `R × max_num_tokens`, else it
//! decodes alone and counts one more wait (`py_executor.py` `_schedule`, `_waiting_requests`).
//! InferenceX's DeepSeek-R1 and Llama-3.3-70B launches set it for some lengths and clients,
//! where a prompt then waits T decode steps before its prefill.

/// Weight of the latest step in the share of steps with a prompt waiting (about 32 steps).
const ADP_SHARE_WEIGHT: f64 = 1.0 / 32.0;

use super::Engine;

impl Engine<'_> {
    /// One TensorRT-LLM step.
    pub(super) fn schedule_trtllm(
        &mut self,
        cutoff_s: f64,
        chunked: bool,
        (adp_timeout, adp_ranks): (u64, u64),
        (wait_iters, wait_ratio): (u64, f64),
    ) {
        let page = self.cfg.block_size.max(1);
        let mut budget = self.cfg.max_num_batched_tokens;
        let seats = self.cfg.max_num_seqs;
        let mut scheduled = 0u64;
        // Blocks the running requests still need up to their last token.
        let mut reserved = 0u64;
        for i in 0..self.running.len() {
            let Some(&id) = self.running.get(i) else {
                break;
            };
            let Some(r) = self.reqs.get(id as usize).copied() else {
                continue;
            };
            let whole = self.prefix_blocks(r.input + r.output);
            reserved += whole.saturating_sub(r.blocks);
            if r.decoding() && budget > 0 && scheduled < seats {
                let k = self.decode_len(&r).min(budget);
                let need = self.blocks_needed(&r, k);
                self.take(id, need, k);
                reserved = reserved.saturating_sub(need);
                budget -= k;
                scheduled += 1;
            }
        }
        // A prompt under way (chunked prefill only: without it a prompt runs whole).
        for i in 0..self.running.len() {
            let Some(&id) = self.running.get(i) else {
                break;
            };
            let Some(r) = self.reqs.get(id as usize).copied() else {
                continue;
            };
            if !r.in_prompt() || budget == 0 || scheduled >= seats {
                continue;
            }
            let left = r.tokens() - r.computed;
            let k = if left <= budget {
                left
            } else {
                (budget / page) * page
            };
            if k == 0 {
                break;
            }
            let need = self.blocks_needed(&r, k);
            self.take(id, need, k);
            reserved = reserved.saturating_sub(need);
            budget -= k;
            scheduled += 1;
        }
        if adp_timeout > 0 && !self.adp_release(cutoff_s, scheduled, adp_timeout, adp_ranks) {
            return;
        }
        if (wait_iters > 0 || wait_ratio > 0.0)
            && scheduled > 0
            && !self.batch_release(cutoff_s, scheduled, budget, wait_iters, wait_ratio)
        {
            return;
        }
        while budget > 0 && scheduled < seats && (self.running.len() as u64) < seats {
            let Some((id, r)) = self.peek_waiting(cutoff_s) else {
                break;
            };
            let whole = self.prefix_blocks(r.input + r.output);
            if whole + reserved > self.free_blocks {
                break;
            }
            let left = r.tokens().saturating_sub(r.computed);
            let k = if left <= budget {
                left
            } else if chunked {
                (budget / page) * page
            } else {
                0
            };
            if k == 0 {
                break;
            }
            let need = self.blocks_needed(&r, k);
            self.admit(id, r);
            self.take(id, need, k);
            reserved += whole.saturating_sub(need);
            budget -= k;
            scheduled += 1;
        }
    }

    /// Whether batch waiting lets prompts in this step (module docs): `tokens` already
    /// scheduled (the decodes, one each), `budget` left of `max_num_tokens`. The prompts
    /// counted are those the step would take, in arrival order, whole (TensorRT-LLM counts a
    /// context request's whole prompt).
    fn batch_release(
        &mut self,
        cutoff_s: f64,
        tokens: u64,
        budget: u64,
        iters: u64,
        ratio: f64,
    ) -> bool {
        let mut prompts = 0u64;
        for &id in &self.waiting {
            if self.entered_after(id, cutoff_s) {
                break;
            }
            let Some(r) = self.reqs.get(id as usize) else {
                break;
            };
            let left = r.tokens().saturating_sub(r.computed);
            if prompts + left > budget {
                break;
            }
            prompts += left;
        }
        if prompts == 0 {
            return true;
        }
        let all = (tokens + prompts) as f64;
        if self.batch_waited >= iters || all >= ratio * self.cfg.max_num_batched_tokens as f64 {
            self.batch_waited = 0;
            return true;
        }
        self.batch_waited += 1;
        false
    }

    /// Whether attention DP's balancing lets prompts in this step (module docs); `decodes`
    /// requests are decoding in it.
    fn adp_release(&mut self, cutoff_s: f64, decodes: u64, timeout: u64, ranks: u64) -> bool {
        let waiting = self.peek_waiting(cutoff_s).is_some();
        self.adp_share += ADP_SHARE_WEIGHT * (f64::from(u8::from(waiting)) - self.adp_share);
        if decodes == 0 {
            self.adp_wait = 0;
            return true;
        }
        if waiting {
            self.adp_odds += self
                .adp_share
                .powi(i32::try_from(ranks).unwrap_or(i32::MAX));
            if self.adp_odds >= 1.0 {
                self.adp_odds -= 1.0;
                self.adp_wait = 0;
                return true;
            }
        }
        self.adp_wait += 1;
        if self.adp_wait >= timeout {
            self.adp_wait = 0;
            return true;
        }
        false
    }
}
