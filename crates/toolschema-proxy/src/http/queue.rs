//! The queue of one client stream: the messages the client has not read yet, bounded in count
//! and in bytes, so that a client that stops reading costs the proxy a bounded amount of memory
//! however large the messages are.
//!
//! A message is refused when the queue is full by count, or when the queue holds something and
//! the message would take it past its byte budget: what a queue holds never exceeds the budget
//! by more than one message (and a message is never larger than `--max-message-bytes`). The
//! sender (the session, under its lock) decides what a refusal costs the client: its stream.
//! One [`Budget`] bounds every queue: a client's streams, the queues toward the server (what a
//! server does not take costs the client the message: a request is answered with an error),
//! the queue toward a stdio client (whose producers wait for room) and the upstream's requests
//! under way.

use super::routes::Outgoing;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, Notify};

/// How many messages may wait for the server (a process's stdin, the upstream's outbox).
pub const SERVER_QUEUE: usize = 1024;

/// Why a message was not queued.
#[derive(Debug)]
pub enum Refused {
    /// The queue is full (by count or by bytes).
    Full,
    /// The client's end is gone; the message is given back.
    Closed(Outgoing),
}

/// The proxy's end of a client stream.
#[derive(Debug)]
pub struct StreamSender {
    sender: mpsc::Sender<(Outgoing, Permit)>,
    budget: Arc<Budget>,
    /// Set when the sender gave the stream up: the client did not read it.
    lost: Arc<AtomicBool>,
}

/// The client's end of a stream, read by the HTTP answer.
#[derive(Debug)]
pub struct StreamReceiver {
    receiver: mpsc::Receiver<(Outgoing, Permit)>,
    lost: Arc<AtomicBool>,
}

/// A queue of at most `count` messages and, but for one message, `budget` bytes (a
/// [`Budget`]: each message holds its room until it is read).
pub fn stream(count: usize, budget: usize) -> (StreamSender, StreamReceiver) {
    let count = count.max(1);
    let (sender, receiver) = mpsc::channel(count);
    let lost = Arc::new(AtomicBool::new(false));
    (
        StreamSender {
            sender,
            budget: Budget::new(count, budget),
            lost: lost.clone(),
        },
        StreamReceiver { receiver, lost },
    )
}

impl StreamSender {
    /// Queue `item`, or give it back with why not.
    pub fn try_send(&self, item: Outgoing) -> Result<(), Refused> {
        if self.sender.is_closed() {
            return Err(Refused::Closed(item));
        }
        // One sender, under the session's lock: the room only grows meanwhile.
        let Some(permit) = self.budget.take(item.data.len()) else {
            return Err(Refused::Full);
        };
        self.sender.try_send((item, permit)).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => Refused::Full,
            mpsc::error::TrySendError::Closed((item, _)) => Refused::Closed(item),
        })
    }

    /// Whether the client's end is gone.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Give the stream up because its client does not read it: the client's end reads what
    /// was queued, then learns it lost the stream.
    pub fn lose(self) {
        self.lost.store(true, Ordering::Release);
    }

    /// The bytes queued now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.budget.held().0
    }
}

impl StreamReceiver {
    /// The next message, `None` once the stream ended (or was lost).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        // Its room is given back as it is read.
        self.receiver
            .poll_recv(cx)
            .map(|item| item.map(|(item, _room)| item))
    }

    /// The next message, `None` once the stream ended (or was lost).
    pub async fn recv(&mut self) -> Option<Outgoing> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Whether the stream ended because its client did not read it.
    pub fn was_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }
}

/// The room a queue has: toward a client's stream or a stdio client, what it has not read;
/// toward the server (a server process's stdin, the upstream's outbox), messages the server
/// has not taken yet; the upstream's requests under way. Bounded in count and, but for one message, in bytes, as a
/// client stream's are. Each queued message holds a [`Permit`] until it was taken.
#[derive(Debug)]
pub struct Budget {
    bytes: AtomicUsize,
    count: AtomicUsize,
    max_bytes: usize,
    max_count: usize,
    /// Woken whenever room is given back.
    room: Notify,
}

/// The room one queued message takes, given back when it is dropped.
#[derive(Debug)]
pub struct Permit {
    budget: Arc<Budget>,
    size: usize,
}

impl Budget {
    /// Room for `max_count` messages and, but for one message, `max_bytes` bytes.
    pub fn new(max_count: usize, max_bytes: usize) -> Arc<Budget> {
        Arc::new(Budget {
            bytes: AtomicUsize::new(0),
            count: AtomicUsize::new(0),
            max_bytes,
            max_count,
            room: Notify::new(),
        })
    }

    /// Room for a message of `size` bytes, if there is some.
    pub fn take(self: &Arc<Self>, size: usize) -> Option<Permit> {
        // One taker at a time (the session's lock): the counts only shrink meanwhile.
        let bytes = self.bytes.load(Ordering::Acquire);
        let count = self.count.load(Ordering::Acquire);
        if count >= self.max_count || (bytes > 0 && bytes.saturating_add(size) > self.max_bytes) {
            return None;
        }
        Some(self.take_anyway(size))
    }

    /// Room for a message of `size` bytes, taken whether there is some or not: for a queue
    /// whose producers wait for room ([`Budget::wait_for_room`]) before they make what they
    /// queue, and which may then not refuse it.
    pub fn take_anyway(self: &Arc<Self>, size: usize) -> Permit {
        self.bytes.fetch_add(size, Ordering::AcqRel);
        self.count.fetch_add(1, Ordering::AcqRel);
        Permit {
            budget: self.clone(),
            size,
        }
    }

    /// Whether the queue holds less than its count and its bytes.
    pub fn has_room(&self) -> bool {
        self.count.load(Ordering::Acquire) < self.max_count
            && self.bytes.load(Ordering::Acquire) < self.max_bytes
    }

    /// Wait until the queue has room ([`Budget::has_room`]).
    pub async fn wait_for_room(&self) {
        loop {
            // Registered before the check: room given back after it wakes this wait.
            let given_back = self.room.notified();
            if self.has_room() {
                return;
            }
            given_back.await;
        }
    }

    /// The bytes and messages held now.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        (
            self.bytes.load(Ordering::Acquire),
            self.count.load(Ordering::Acquire),
        )
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget.bytes.fetch_sub(self.size, Ordering::AcqRel);
        self.budget.count.fetch_sub(1, Ordering::AcqRel);
        self.budget.room.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn message(size: usize) -> Outgoing {
        Outgoing {
            event_id: None,
            data: vec![b'x'; size],
            last: false,
        }
    }

    proptest! {
        /// Whatever the sizes of the messages and however the client reads, a queue never
        /// holds more than its count, nor more bytes than its budget and one message; a
        /// message is refused only when the queue holds something; and what is read is what
        /// was queued, in order.
        #[test]
        fn a_queue_is_bounded_in_count_and_in_bytes(
            count in 1usize..16,
            budget in 0usize..4096,
            steps in proptest::collection::vec(prop_oneof![
                (0usize..2048).prop_map(Some),
                Just(None),
            ], 0..200),
        ) {
            let (sender, mut receiver) = stream(count, budget);
            let waker = futures::task::noop_waker();
            let mut cx = Context::from_waker(&waker);
            let mut queued = std::collections::VecDeque::new();
            let mut largest = 0;
            for step in steps {
                match step {
                    Some(size) => {
                        let was_empty = queued.is_empty();
                        match sender.try_send(message(size)) {
                            Ok(()) => {
                                queued.push_back(size);
                                largest = largest.max(size);
                            }
                            Err(Refused::Full) => {
                                prop_assert!(!was_empty, "refused into an empty queue");
                            }
                            Err(Refused::Closed(_)) => prop_assert!(false, "closed"),
                        }
                    }
                    None => match receiver.poll_recv(&mut cx) {
                        Poll::Ready(Some(item)) => {
                            prop_assert_eq!(Some(item.data.len()), queued.pop_front());
                        }
                        other => prop_assert!(queued.is_empty() && other.is_pending()),
                    },
                }
                let held: usize = queued.iter().sum();
                prop_assert_eq!(sender.held(), held);
                prop_assert!(queued.len() <= count);
                prop_assert!(held <= budget.max(largest), "{} held past a budget of {}", held, budget);
            }
        }
    }

    proptest! {
        /// A budget toward the server holds, whatever the sizes and the order messages are
        /// taken in, at most its count and, but for one message, its bytes; it refuses only
        /// when it holds something.
        #[test]
        fn a_budget_is_bounded_in_count_and_in_bytes(
            max_count in 1usize..16,
            max_bytes in 0usize..4096,
            steps in proptest::collection::vec(prop_oneof![
                (0usize..2048).prop_map(Some),
                any::<proptest::sample::Index>().prop_map(|_| None),
            ], 0..200),
            picks in proptest::collection::vec(any::<proptest::sample::Index>(), 200),
        ) {
            let budget = Budget::new(max_count, max_bytes);
            let mut permits: Vec<Permit> = Vec::new();
            let mut largest = 0;
            for (step, pick) in steps.into_iter().zip(picks) {
                match step {
                    Some(size) => match budget.take(size) {
                        Some(permit) => {
                            largest = largest.max(size);
                            permits.push(permit);
                        }
                        None => prop_assert!(!permits.is_empty()),
                    },
                    None if !permits.is_empty() => {
                        permits.swap_remove(pick.index(permits.len()));
                    }
                    None => {}
                }
                let held: usize = permits.iter().map(|p| p.size).sum();
                prop_assert_eq!(budget.held(), (held, permits.len()));
                prop_assert!(permits.len() <= max_count);
                prop_assert!(held <= max_bytes.max(largest));
            }
        }
    }

    /// A producer that waits for room is woken when a message is taken, and only then.
    #[tokio::test]
    async fn a_wait_for_room_ends_when_room_is_given_back() {
        let budget = Budget::new(2, 100);
        let first = budget.take_anyway(60);
        let second = budget.take_anyway(60);
        assert!(!budget.has_room());
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.wait_for_room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(first);
        waiting.await.unwrap();
        assert!(budget.has_room());
        drop(second);
        assert_eq!(budget.held(), (0, 0));
    }

    #[test]
    fn a_lost_stream_ends_after_what_was_queued() {
        let (sender, mut receiver) = stream(4, 10);
        sender.try_send(message(8)).unwrap();
        assert!(matches!(sender.try_send(message(8)), Err(Refused::Full)));
        sender.lose();
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(matches!(receiver.poll_recv(&mut cx), Poll::Ready(Some(_))));
        assert!(matches!(receiver.poll_recv(&mut cx), Poll::Ready(None)));
        assert!(receiver.was_lost());
    }
}
