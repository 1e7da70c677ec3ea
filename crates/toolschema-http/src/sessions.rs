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
    /// The session exists; its opener is not known yet.
    Created,
    /// The session is held by this client; the permit is given back when the slot goes.
    Owned {
        owner: ClientKey,
        _permit: SessionPermit,
    },
}

/// Open sessions by id: who owns each, and the permit it holds.
#[derive(Clone, Default)]
pub struct SessionRegistry {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

impl SessionRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session `id` now exists (called by the session layer when it creates one).
    pub fn created(&self, id: &str) {
        lock(&self.slots)
            .entry(id.to_string())
            .or_insert(Slot::Created);
    }

    /// The session `id` was opened by `principal` with `permit`. When the session ended already,
    /// the permit is given back at once.
    pub fn opened(&self, id: &str, principal: &Principal, permit: SessionPermit) {
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get_mut(id) {
            *slot = Slot::Owned {
                owner: principal.session_key(),
                _permit: permit,
            };
        }
    }

    /// The session `id` ended; its permit is given back.
    pub fn ended(&self, id: &str) {
        let removed = lock(&self.slots).remove(id);
        drop(removed);
    }

    /// Whether `principal` may use session `id`: it opened it. Sessions the registry does not
    /// know pass (the session layer answers for those); a session opened by another client is
    /// refused as if it did not exist.
    pub fn check_owner(&self, id: &str, principal: &Principal) -> Result<(), Refusal> {
        match lock(&self.slots).get(id) {
            Some(Slot::Owned { owner, .. }) if *owner != principal.session_key() => {
                Err(Refusal::new(
                    RefusalKind::UnknownSession,
                    "no such session for this client",
                ))
            }
            _ => Ok(()),
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
        registry.created("s1");
        registry.opened("s1", &alice, limiter.acquire(&alice).unwrap());
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
        // A session that ended before its opener was recorded gives the permit back at once.
        registry.opened("gone", &alice, limiter.acquire(&alice).unwrap());
        assert_eq!(limiter.open_for(&alice), 0);
        assert!(registry.is_empty());
    }
}
