//! Sessions per client: at most `--max-sessions-per-token` open at once for one client (all
//! clients count as one when authentication is off), and each session usable only by the client
//! that opened it.
//!
//! A server asks for a [`SessionPermit`] before it opens a session, and hands it to the
//! [`SessionRegistry`] with the new session's id; the permit is given back when the session ends
//! (or when no session was opened after all), whichever way it ends.

use crate::principal::{AuthMethod, Principal};
use crate::refusal::{Refusal, RefusalKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

type ClientKey = (AuthMethod, Arc<str>);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Counts the sessions each client holds.
#[derive(Debug, Clone)]
pub struct SessionLimiter {
    max_per_client: usize,
    open: Arc<Mutex<HashMap<ClientKey, usize>>>,
}

impl SessionLimiter {
    /// At most `max_per_client` sessions per client.
    pub fn new(max_per_client: usize) -> Self {
        SessionLimiter {
            max_per_client,
            open: Arc::default(),
        }
    }

    /// A permit for one more session of `principal`, or a 429 refusal.
    pub fn acquire(&self, principal: &Principal) -> Result<SessionPermit, Refusal> {
        let key = principal.session_key();
        let mut open = lock(&self.open);
        let count = open.entry(key.clone()).or_insert(0);
        if *count >= self.max_per_client {
            return Err(Refusal::new(
                RefusalKind::TooManySessions,
                format!(
                    "'{}' already has {} open sessions, the most allowed (--max-sessions-per-token); close one (HTTP DELETE), or wait until one has been idle for --session-idle",
                    principal.name(),
                    self.max_per_client
                ),
            ));
        }
        *count += 1;
        Ok(SessionPermit {
            open: self.open.clone(),
            key,
        })
    }

    /// How many sessions `principal` holds.
    pub fn open_for(&self, principal: &Principal) -> usize {
        lock(&self.open)
            .get(&principal.session_key())
            .copied()
            .unwrap_or(0)
    }
}

/// One session's place in its client's count, given back when dropped.
#[derive(Debug)]
pub struct SessionPermit {
    open: Arc<Mutex<HashMap<ClientKey, usize>>>,
    key: ClientKey,
}

impl Drop for SessionPermit {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        if let Some(count) = open.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

enum Slot {
    /// The session exists, but no client's permit was in scope when it was created: it has
    /// no owner, and no client may use it.
    Created,
    /// The session is held by this client; the permit is given back when the slot goes.
    Owned {
        owner: ClientKey,
        _permit: SessionPermit,
    },
}

tokio::task_local! {
    /// The permit of the client whose request is opening a session, while the session layer
    /// runs for it (see [`SessionRegistry::opening`]).
    static OPENING: std::cell::RefCell<Option<SessionPermit>>;
}

/// Open sessions by id: who owns each, and the permit it holds.
///
/// A session is owned from the moment it exists: either the session layer creates it while
/// the permit of the client opening it is in scope ([`SessionRegistry::opening`], then
/// [`SessionRegistry::created`]), or the server records it with its permit as soon as it
/// learns its id ([`SessionRegistry::opened`]). A session created without a permit in scope
/// has no owner and is refused to every client.
#[derive(Clone, Default)]
pub struct SessionRegistry {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

impl SessionRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run `work` (a request to the session layer) with `permit` in scope: a session the
    /// session layer creates meanwhile ([`SessionRegistry::created`]) is owned by the permit's
    /// client from its creation. When no session was created, the permit is given back when
    /// `work` ends, or when it is dropped unfinished.
    pub async fn opening<F: std::future::Future>(permit: SessionPermit, work: F) -> F::Output {
        OPENING
            .scope(std::cell::RefCell::new(Some(permit)), work)
            .await
    }

    /// The session `id` now exists (called by the session layer when it creates one). It is
    /// owned by the client whose permit is in scope ([`SessionRegistry::opening`]); without
    /// one, by no one.
    pub fn created(&self, id: &str) {
        let permit = OPENING
            .try_with(|opening| opening.borrow_mut().take())
            .ok()
            .flatten();
        let slot = match permit {
            Some(permit) => Slot::Owned {
                owner: permit.key.clone(),
                _permit: permit,
            },
            None => Slot::Created,
        };
        lock(&self.slots).entry(id.to_string()).or_insert(slot);
    }

    /// The session `id` was opened with `permit`, by the permit's client: it is recorded as
    /// theirs (in place of whatever was recorded under `id`, which the caller has ended).
    pub fn opened(&self, id: &str, permit: SessionPermit) {
        let slot = Slot::Owned {
            owner: permit.key.clone(),
            _permit: permit,
        };
        let replaced = lock(&self.slots).insert(id.to_string(), slot);
        drop(replaced);
    }

    /// The session `id` ended; its permit is given back.
    pub fn ended(&self, id: &str) {
        let removed = lock(&self.slots).remove(id);
        drop(removed);
    }

    /// Whether `principal` may use session `id`: it opened it. Sessions the registry does not
    /// know pass (the session layer answers for those); a session opened by another client, or
    /// by no known client, is refused as if it did not exist.
    pub fn check_owner(&self, id: &str, principal: &Principal) -> Result<(), Refusal> {
        match lock(&self.slots).get(id) {
            None => Ok(()),
            Some(Slot::Owned { owner, .. }) if *owner == principal.session_key() => Ok(()),
            Some(_) => Err(Refusal::new(
                RefusalKind::UnknownSession,
                "no such session for this client",
            )),
        }
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn client(name: &str) -> Principal {
        Principal::new(name, AuthMethod::Token, BTreeSet::new())
    }

    #[test]
    fn each_client_has_its_own_count() {
        let limiter = SessionLimiter::new(2);
        let (alice, bob) = (client("alice"), client("bob"));
        let first = limiter.acquire(&alice).unwrap();
        let _second = limiter.acquire(&alice).unwrap();
        let refused = limiter.acquire(&alice).unwrap_err();
        assert_eq!(refused.status(), http::StatusCode::TOO_MANY_REQUESTS);
        assert!(refused
            .message()
            .starts_with("'alice' already has 2 open sessions"));
        let _bob = limiter.acquire(&bob).unwrap();
        drop(first);
        assert_eq!(limiter.open_for(&alice), 1);
        assert!(limiter.acquire(&alice).is_ok());
    }

    #[test]
    fn the_registry_gives_permits_back_when_sessions_end() {
        let limiter = SessionLimiter::new(1);
        let registry = SessionRegistry::new();
        let alice = client("alice");
        registry.opened("s1", limiter.acquire(&alice).unwrap());
        assert!(limiter.acquire(&alice).is_err());
        assert_eq!(registry.check_owner("s1", &alice), Ok(()));
        assert_eq!(
            registry
                .check_owner("s1", &client("bob"))
                .unwrap_err()
                .status(),
            http::StatusCode::NOT_FOUND
        );
        registry.ended("s1");
        assert_eq!(limiter.open_for(&alice), 0);
        assert!(registry.is_empty());
    }

    #[tokio::test]
    async fn a_session_is_owned_from_its_creation_or_by_no_one() {
        let limiter = SessionLimiter::new(1);
        let registry = SessionRegistry::new();
        let (alice, bob) = (client("alice"), client("bob"));
        // Created while alice's permit is in scope: hers, and counted, at once.
        let permit = limiter.acquire(&alice).unwrap();
        SessionRegistry::opening(permit, async { registry.created("s1") }).await;
        assert_eq!(registry.check_owner("s1", &alice), Ok(()));
        assert!(registry.check_owner("s1", &bob).is_err());
        assert_eq!(limiter.open_for(&alice), 1);
        // No session created: the permit is given back when the work ends.
        let permit = limiter.acquire(&bob).unwrap();
        SessionRegistry::opening(permit, async {}).await;
        assert_eq!(limiter.open_for(&bob), 0);
        // Created without a permit in scope: no one's, refused to everyone.
        registry.created("s2");
        assert!(registry.check_owner("s2", &alice).is_err());
        assert!(registry.check_owner("s2", &bob).is_err());
        registry.ended("s1");
        assert_eq!(limiter.open_for(&alice), 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any number of clients opening sessions at once from threads, each the way the
        /// servers do (a permit, then the session recorded with it): no client holds more than
        /// the limit, every client gets as many as the limit allows, and every session is its
        /// opener's and no one else's.
        #[test]
        fn simultaneous_opens_keep_the_limit_and_their_owners(
            openers in proptest::collection::vec(0..4usize, 1..24),
            limit in 1..5usize,
            via_scope in proptest::bool::ANY,
        ) {
            let limiter = SessionLimiter::new(limit);
            let registry = SessionRegistry::new();
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(openers.len()));
            let threads: Vec<_> = openers
                .iter()
                .enumerate()
                .map(|(n, &who)| {
                    let (limiter, registry, barrier) = (limiter.clone(), registry.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        let principal = client(&format!("client-{who}"));
                        barrier.wait();
                        let permit = limiter.acquire(&principal).ok()?;
                        let id = format!("s-{n}");
                        if via_scope {
                            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                            runtime.block_on(SessionRegistry::opening(permit, async { registry.created(&id) }));
                        } else {
                            registry.opened(&id, permit);
                        }
                        Some((who, id))
                    })
                })
                .collect();
            let opened: Vec<(usize, String)> =
                threads.into_iter().filter_map(|t| t.join().unwrap()).collect();
            for who in 0..4 {
                let wanted = openers.iter().filter(|&&w| w == who).count();
                let got = opened.iter().filter(|(w, _)| *w == who).count();
                proptest::prop_assert_eq!(got, wanted.min(limit));
                proptest::prop_assert_eq!(limiter.open_for(&client(&format!("client-{who}"))), got);
            }
            for (owner, id) in &opened {
                for who in 0..4 {
                    let allowed = registry.check_owner(id, &client(&format!("client-{who}"))).is_ok();
                    proptest::prop_assert_eq!(allowed, who == *owner);
                }
            }
            proptest::prop_assert_eq!(registry.len(), opened.len());
        }
    }
}
