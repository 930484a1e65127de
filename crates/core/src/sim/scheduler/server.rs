//! The requests' way into the engine: a request ready to send waits for a client (under
//! `max_concurrency`) and for a drained warm-up, goes through the API server's serial worker
//! and its fixed frontend path, and enters the waiting queue.

use super::{Engine, Kind, Stage};

impl Engine<'_> {
    pub(super) fn wake(&mut self) {
        if !self.busy {
            self.busy = true;
            self.push(self.now, Kind::StepStart);
        }
    }

    pub(super) fn on_ready(&mut self, i: u32) {
        let next = i as usize + 1;
        if let (true, Some(&t)) = (self.chain, self.ready_times.get(next)) {
            self.push(t, Kind::Ready(next as u32));
        }
        if u64::from(i) >= self.barrier && self.warm_done < self.barrier {
            self.held.push_back(i);
            return;
        }
        self.offer(i);
    }

    /// A client sends request `i` now if fewer than `max_concurrency` are in flight, else
    /// when one returns.
    pub(super) fn offer(&mut self, i: u32) {
        if self.in_flight < self.max_concurrency {
            self.send(i);
        } else {
            self.client_queue.push_back(i);
        }
    }

    /// The client sends request `i`: it is in flight (and counted as waiting) from now, and
    /// reaches the engine's queue after the server's path: its serial part (one worker, first
    /// come first served: `frontend_per_token_s` per prompt token) and its fixed latency
    /// (`frontend_overhead_s`).
    pub(super) fn send(&mut self, i: u32) {
        let now = self.now;
        let Some(r) = self.reqs.get_mut(i as usize) else {
            return;
        };
        r.stage = Stage::Waiting;
        let input = r.input as f64;
        self.in_flight += 1;
        let serial = self.cfg.frontend_per_token_s * input;
        let served = if serial > 0.0 {
            self.server_free_s = self.server_free_s.max(now) + serial;
            self.server_free_s
        } else {
            now
        };
        let enter = served + self.cfg.frontend_overhead_s;
        if let Some(t) = self.times.get_mut(i as usize) {
            t.send_s = now;
            t.entered_s = enter;
        }
        if enter > now {
            self.push(enter, Kind::Enter(i));
        } else {
            self.enter(i);
        }
    }

    /// Request `i` reaches the engine's waiting queue.
    pub(super) fn enter(&mut self, i: u32) {
        self.waiting.push_back(i);
        self.wake();
    }
}
