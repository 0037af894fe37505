//! A rendezvous for communicators of several processes, on one host or
//! many: rank 0 listens on an address, every other rank connects and
//! says who it is, and once all `world_size - 1` have arrived rank 0 sends
//! each the communicator's [`UniqueId`]. Receiving the id therefore means
//! that every rank arrived. Plain TCP (`std::net`), no dependency.
//!
//! The configuration comes from the environment, with the names torchrun
//! uses ([`RendezvousConfig::from_env`]): `MASTER_ADDR` (host name or
//! address of rank 0), `MASTER_PORT`, `RANK`, `WORLD_SIZE`; and
//! `CUDAKIT_RENDEZVOUS_TIMEOUT` (seconds, default 60). Or it is given in
//! code ([`RendezvousConfig::new`]).
//!
//! Every wait is bounded by the timeout: a rank that never arrives, a rank
//! 0 that is not there or dies, a rank with another world size or a rank
//! number taken twice is [`Error::Rendezvous`] on every rank that is
//! there, within the timeout, never a hang. Rank 0 tells the ranks that
//! did arrive why the rendezvous failed, so they fail at once. The id is
//! never logged or put into an error.
//!
//! The wire format, version 1, every integer little-endian: a rank sends
//! `CKRV` `1` (u8), its rank (u32), the world size (u32). Rank 0 answers
//! `O` followed by the 128 id bytes, or `E`, a length (u16) and a UTF-8
//! reason.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use cuda_sys::nccl::NCCL_UNIQUE_ID_BYTES;

use super::comm::{Communicator, UniqueId};
use crate::context::Context;
use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"CKRV";
const VERSION: u8 = 1;
/// How long a rank waits between attempts to reach rank 0.
const RETRY: Duration = Duration::from_millis(50);

/// Where and who: rank 0's address, this rank, the world size, and how
/// long any step may take.
#[derive(Debug, Clone)]
pub struct RendezvousConfig {
    /// Rank 0's address, `host:port`.
    pub address: String,
    /// This process's rank, from 0.
    pub rank: usize,
    /// The number of ranks.
    pub world_size: usize,
    /// The bound on the whole rendezvous.
    pub timeout: Duration,
}

impl RendezvousConfig {
    /// A configuration given in code.
    pub fn new(address: impl Into<String>, rank: usize, world_size: usize) -> Self {
        RendezvousConfig {
            address: address.into(),
            rank,
            world_size,
            timeout: Duration::from_secs(60),
        }
    }

    /// With another timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// From `MASTER_ADDR`, `MASTER_PORT`, `RANK`, `WORLD_SIZE` and
    /// `CUDAKIT_RENDEZVOUS_TIMEOUT` (seconds; 60 when unset).
    ///
    /// # Errors
    ///
    /// [`Error::Rendezvous`] naming a variable that is missing or not a
    /// number.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`RendezvousConfig::from_env`] with the variables read by `get`.
    fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let need = |name: &str| {
            get(name).ok_or_else(|| Error::Rendezvous {
                rank: None,
                reason: format!(
                    "{name} is not set (a rendezvous reads MASTER_ADDR, MASTER_PORT, RANK and \
                     WORLD_SIZE)"
                ),
            })
        };
        let number = |name: &str| -> Result<usize> {
            let text = need(name)?;
            text.trim().parse::<usize>().map_err(|_| Error::Rendezvous {
                rank: None,
                reason: format!("{name}={text:?} is not a number"),
            })
        };
        let host = need("MASTER_ADDR")?;
        let port = number("MASTER_PORT")?;
        if port == 0 || port > u16::MAX as usize {
            return Err(Error::Rendezvous {
                rank: None,
                reason: format!("MASTER_PORT={port} is not a port (1 to 65535)"),
            });
        }
        let rank = number("RANK")?;
        let world_size = number("WORLD_SIZE")?;
        let timeout = match get("CUDAKIT_RENDEZVOUS_TIMEOUT") {
            None => Duration::from_secs(60),
            Some(t) => Duration::from_secs_f64(
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0)
                    .ok_or_else(|| Error::Rendezvous {
                        rank: None,
                        reason: format!(
                            "CUDAKIT_RENDEZVOUS_TIMEOUT={t:?} is not a positive number of seconds"
                        ),
                    })?,
            ),
        };
        let address = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}") // an IPv6 address
        } else {
            format!("{host}:{port}")
        };
        Ok(RendezvousConfig {
            address,
            rank,
            world_size,
            timeout,
        })
    }

    fn check(&self) -> Result<()> {
        if self.world_size == 0
            || self.rank >= self.world_size
            || self.world_size > u32::MAX as usize
        {
            return Err(self.error(format!(
                "rank {} of a world of {} ranks",
                self.rank, self.world_size
            )));
        }
        Ok(())
    }

    fn error(&self, reason: String) -> Error {
        Error::Rendezvous {
            rank: Some(self.rank),
            reason,
        }
    }
}

/// What a rendezvous gives each rank: its rank, the world size and the
/// communicator's id.
#[derive(Debug)]
pub struct Rendezvous {
    /// This rank.
    pub rank: usize,
    /// The number of ranks.
    pub world_size: usize,
    /// The communicator's bootstrap id (made by rank 0).
    pub id: UniqueId,
}

impl Rendezvous {
    /// Runs the rendezvous described by `config`: on rank 0, makes the id
    /// with [`UniqueId::new`] (which starts NCCL's bootstrap) once every
    /// other rank arrived, and sends it to them; on the others, receives
    /// it.
    ///
    /// # Errors
    ///
    /// [`Error::Rendezvous`] as described in the [module docs](self); NCCL
    /// errors of `UniqueId::new` on rank 0.
    pub fn run(config: &RendezvousConfig) -> Result<Rendezvous> {
        Self::run_with(config, UniqueId::new)
    }

    /// [`Rendezvous::run`], with rank 0's id made by `make_id` (for
    /// example a stand-in's, or an id made earlier).
    ///
    /// # Errors
    ///
    /// As [`Rendezvous::run`], and `make_id`'s.
    pub fn run_with(
        config: &RendezvousConfig,
        make_id: impl FnOnce() -> Result<UniqueId>,
    ) -> Result<Rendezvous> {
        config.check()?;
        let deadline = Instant::now() + config.timeout;
        let id = if config.rank == 0 {
            root(config, deadline, make_id)?
        } else {
            member(config, deadline)?
        };
        Ok(Rendezvous {
            rank: config.rank,
            world_size: config.world_size,
            id,
        })
    }

    /// This rank's communicator ([`Communicator::init_rank`] with the
    /// rendezvous's id, rank and world size) on `ctx`'s device; `timeout`
    /// bounds NCCL's own bootstrap and later waits, as there.
    ///
    /// # Errors
    ///
    /// As [`Communicator::init_rank`].
    pub fn communicator(&self, ctx: &Context, timeout: Duration) -> Result<Communicator> {
        Communicator::init_rank(ctx, &self.id, self.rank, self.world_size, timeout)
    }
}

fn resolve(config: &RendezvousConfig) -> Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = config
        .address
        .to_socket_addrs()
        .map_err(|e| config.error(format!("cannot resolve {}: {e}", config.address)))?
        .collect();
    if addrs.is_empty() {
        return Err(config.error(format!("{} resolves to no address", config.address)));
    }
    Ok(addrs)
}

fn left(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

/// Rank 0: listens, admits every other rank once, then answers all.
fn root(
    config: &RendezvousConfig,
    deadline: Instant,
    make_id: impl FnOnce() -> Result<UniqueId>,
) -> Result<UniqueId> {
    let addrs = resolve(config)?;
    let listener = TcpListener::bind(&addrs[..]).map_err(|e| {
        config.error(format!(
            "rank 0 cannot listen on {}: {e} (another process may hold the port, or the address \
             is not this host's)",
            config.address
        ))
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| config.error(format!("cannot poll the listener: {e}")))?;
    let n = config.world_size;
    let mut arrived: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut count = 1;
    let fail = |arrived: &mut Vec<Option<TcpStream>>, reason: String| -> Error {
        for s in arrived.iter_mut().flatten() {
            refuse(s, &reason);
        }
        config.error(reason)
    };
    while count < n {
        let Some(rest) = left(deadline) else {
            let missing: Vec<String> = (1..n)
                .filter(|&r| arrived[r].is_none())
                .map(|r| r.to_string())
                .collect();
            return Err(fail(
                &mut arrived,
                format!(
                    "rank(s) {} never arrived at {} within {:?}",
                    missing.join(", "),
                    config.address,
                    config.timeout
                ),
            ));
        };
        let mut stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(RETRY.min(rest) / 5);
                continue;
            }
            Err(e) => return Err(fail(&mut arrived, format!("accepting a rank failed: {e}"))),
        };
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_nodelay(true);
        let hello = read_hello(&mut stream, rest);
        let (rank, world) = match hello {
            Ok(h) => h,
            // Not a rank of ours (a port scanner, a stray connection): it is
            // dropped, the rendezvous goes on.
            Err(_) => continue,
        };
        if world != n {
            let reason =
                format!("rank {rank} was started with a world of {world} ranks, rank 0 with {n}");
            refuse(&mut stream, &reason);
            return Err(fail(&mut arrived, reason));
        }
        if rank == 0 || rank >= n {
            let reason = format!("a process claims rank {rank} in a world of {n} ranks");
            refuse(&mut stream, &reason);
            return Err(fail(&mut arrived, reason));
        }
        if arrived[rank].is_some() {
            let reason = format!("two processes claim rank {rank}");
            refuse(&mut stream, &reason);
            return Err(fail(&mut arrived, reason));
        }
        arrived[rank] = Some(stream);
        count += 1;
    }
    let id = match make_id() {
        Ok(id) => id,
        Err(e) => {
            let _ = fail(&mut arrived, format!("rank 0 could not make the id: {e}"));
            return Err(e);
        }
    };
    let mut reply = Vec::with_capacity(1 + NCCL_UNIQUE_ID_BYTES);
    reply.push(b'O');
    reply.extend_from_slice(&id.as_bytes());
    for (rank, s) in arrived.iter_mut().enumerate() {
        if let Some(s) = s {
            let _ = s.set_write_timeout(left(deadline).or(Some(Duration::from_millis(1))));
            s.write_all(&reply)
                .map_err(|e| config.error(format!("sending the id to rank {rank} failed: {e}")))?;
        }
    }
    Ok(id)
}

/// Tells a rank why the rendezvous failed (best effort).
fn refuse(stream: &mut TcpStream, reason: &str) {
    let bytes = reason.as_bytes();
    let n = bytes.len().min(u16::MAX as usize);
    let mut msg = Vec::with_capacity(3 + n);
    msg.push(b'E');
    msg.extend_from_slice(&(n as u16).to_le_bytes());
    msg.extend_from_slice(&bytes[..n]);
    let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
    let _ = stream.write_all(&msg);
}

fn read_hello(stream: &mut TcpStream, rest: Duration) -> std::io::Result<(usize, usize)> {
    stream.set_read_timeout(Some(rest.min(Duration::from_secs(5))))?;
    let mut b = [0u8; 13];
    stream.read_exact(&mut b)?;
    if &b[..4] != MAGIC || b[4] != VERSION {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            "not a rendezvous hello",
        ));
    }
    let rank = u32::from_le_bytes([b[5], b[6], b[7], b[8]]) as usize;
    let world = u32::from_le_bytes([b[9], b[10], b[11], b[12]]) as usize;
    Ok((rank, world))
}

/// A rank other than 0: reaches rank 0 (retrying while it is not there
/// yet), says who it is, waits for the id.
fn member(config: &RendezvousConfig, deadline: Instant) -> Result<UniqueId> {
    let addrs = resolve(config)?;
    let mut last_error = None;
    let mut stream = loop {
        let Some(rest) = left(deadline) else {
            let why = last_error.map_or_else(String::new, |e: std::io::Error| format!(" ({e})"));
            return Err(config.error(format!(
                "rank 0 could not be reached at {} within {:?}{why}: is rank 0 running there, and \
                 does the host's firewall let the port through?",
                config.address, config.timeout
            )));
        };
        let mut connected = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, rest.min(Duration::from_secs(2))) {
                Ok(s) => {
                    connected = Some(s);
                    break;
                }
                Err(e) => last_error = Some(e),
            }
        }
        match connected {
            Some(s) => break s,
            None => std::thread::sleep(RETRY.min(rest)),
        }
    };
    let _ = stream.set_nodelay(true);
    let mut hello = Vec::with_capacity(13);
    hello.extend_from_slice(MAGIC);
    hello.push(VERSION);
    hello.extend_from_slice(&(config.rank as u32).to_le_bytes());
    hello.extend_from_slice(&(config.world_size as u32).to_le_bytes());
    stream
        .set_write_timeout(left(deadline).or(Some(Duration::from_millis(1))))
        .and_then(|()| stream.write_all(&hello))
        .map_err(|e| config.error(format!("sending this rank's hello to rank 0 failed: {e}")))?;
    // The answer comes when every rank has arrived, or the rendezvous failed.
    let mut kind = [0u8; 1];
    read_until(&mut stream, &mut kind, deadline).map_err(|e| match e {
        ReadError::Timeout => config.error(format!(
            "rank 0 did not answer within {:?}: not every rank arrived",
            config.timeout
        )),
        ReadError::Closed => config.error(
            "rank 0 closed the connection before sending the id (it died, or gave up)".into(),
        ),
        ReadError::Io(e) => config.error(format!("reading rank 0's answer failed: {e}")),
    })?;
    match kind[0] {
        b'O' => {
            let mut id = [0u8; NCCL_UNIQUE_ID_BYTES];
            read_until(&mut stream, &mut id, deadline)
                .map_err(|_| config.error("rank 0's id arrived incomplete".into()))?;
            UniqueId::from_bytes(&id)
        }
        b'E' => {
            let mut len = [0u8; 2];
            let mut text = Vec::new();
            if read_until(&mut stream, &mut len, deadline).is_ok() {
                text = vec![0u8; u16::from_le_bytes(len) as usize];
                let _ = read_until(&mut stream, &mut text, deadline);
            }
            Err(config.error(format!(
                "rank 0 ended the rendezvous: {}",
                String::from_utf8_lossy(&text)
            )))
        }
        other => Err(config.error(format!(
            "rank 0 answered with an unknown message (byte {other}): a different cudakit?"
        ))),
    }
}

enum ReadError {
    Timeout,
    Closed,
    Io(std::io::Error),
}

fn read_until(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
) -> std::result::Result<(), ReadError> {
    let mut got = 0;
    while got < buf.len() {
        let Some(rest) = left(deadline) else {
            return Err(ReadError::Timeout);
        };
        stream.set_read_timeout(Some(rest)).map_err(ReadError::Io)?;
        match stream.read(&mut buf[got..]) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(n) => got += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(ReadError::Timeout)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                ) =>
            {
                return Err(ReadError::Closed)
            }
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(byte: u8) -> UniqueId {
        UniqueId::from_bytes(&[byte; NCCL_UNIQUE_ID_BYTES]).expect("id")
    }

    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port")
    }

    fn config(port: u16, rank: usize, world: usize, secs: f64) -> RendezvousConfig {
        RendezvousConfig::new(format!("127.0.0.1:{port}"), rank, world)
            .timeout(Duration::from_secs_f64(secs))
    }

    #[test]
    fn every_rank_gets_rank_zeros_id_whatever_the_order_of_arrival() {
        for order in [[1usize, 2, 3], [3, 2, 1], [2, 3, 1]] {
            let port = free_port();
            let results = std::thread::scope(|t| {
                let mut handles = Vec::new();
                // Members first, in `order`, some before rank 0 listens.
                for &r in &order {
                    handles.push(t.spawn(move || {
                        std::thread::sleep(Duration::from_millis(20 * r as u64));
                        Rendezvous::run_with(&config(port, r, 4, 10.0), || unreachable!())
                    }));
                }
                std::thread::sleep(Duration::from_millis(30));
                let root = Rendezvous::run_with(&config(port, 0, 4, 10.0), || Ok(id(0x5A)));
                let mut all = vec![root];
                all.extend(handles.into_iter().map(|h| h.join().expect("thread")));
                all
            });
            for r in results {
                let r = r.expect("rendezvous");
                assert_eq!(r.world_size, 4);
                assert_eq!(r.id.as_bytes(), [0x5A; NCCL_UNIQUE_ID_BYTES]);
            }
        }
    }

    #[test]
    fn a_rank_that_never_arrives_fails_every_rank_within_the_timeout() {
        let port = free_port();
        let started = Instant::now();
        let (root, member) = std::thread::scope(|t| {
            let m =
                t.spawn(move || Rendezvous::run_with(&config(port, 1, 3, 5.0), || unreachable!()));
            let root = Rendezvous::run_with(&config(port, 0, 3, 1.0), || Ok(id(1)));
            (root, m.join().expect("thread"))
        });
        let root = root.unwrap_err().to_string();
        assert!(root.contains("rank(s) 2 never arrived"), "{root}");
        // Rank 1 learns it from rank 0 at once, not after its own 5 s.
        let member = member.unwrap_err().to_string();
        assert!(member.contains("never arrived"), "{member}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_wrong_world_size_or_a_rank_taken_twice_is_refused_on_both_sides() {
        let port = free_port();
        let (root, member) = std::thread::scope(|t| {
            let m = t.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                Rendezvous::run_with(&config(port, 1, 3, 5.0), || unreachable!())
            });
            let root = Rendezvous::run_with(&config(port, 0, 2, 5.0), || Ok(id(2)));
            (root, m.join().expect("thread"))
        });
        let root = root.unwrap_err().to_string();
        assert!(root.contains("world of 3 ranks, rank 0 with 2"), "{root}");
        let member = member.unwrap_err().to_string();
        assert!(member.contains("rank 0 ended the rendezvous"), "{member}");

        let port = free_port();
        let (root, a, b) = std::thread::scope(|t| {
            let a =
                t.spawn(move || Rendezvous::run_with(&config(port, 1, 3, 5.0), || unreachable!()));
            let b = t.spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                Rendezvous::run_with(&config(port, 1, 3, 5.0), || unreachable!())
            });
            let root = Rendezvous::run_with(&config(port, 0, 3, 5.0), || Ok(id(3)));
            (root, a.join().expect("a"), b.join().expect("b"))
        });
        assert!(root
            .unwrap_err()
            .to_string()
            .contains("two processes claim rank 1"));
        assert!(a.is_err() && b.is_err());
    }

    #[test]
    fn a_missing_or_dead_root_is_a_typed_error_not_a_hang() {
        // Nobody listens.
        let port = free_port();
        let started = Instant::now();
        let e = Rendezvous::run_with(&config(port, 1, 2, 0.5), || unreachable!())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("could not be reached") && e.contains("firewall"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        // A "root" that accepts, reads the hello and dies.
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let e = std::thread::scope(|t| {
            t.spawn(move || {
                let (mut s, _) = listener.accept().expect("accept");
                let mut b = [0u8; 13];
                let _ = s.read_exact(&mut b);
                drop(s);
            });
            Rendezvous::run_with(&config(port, 1, 2, 5.0), || unreachable!())
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("closed the connection"), "{e}");
    }

    #[test]
    fn the_environment_is_read_and_checked() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let c = RendezvousConfig::from_lookup(env(&[
            ("MASTER_ADDR", "10.0.0.7"),
            ("MASTER_PORT", "29500"),
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("CUDAKIT_RENDEZVOUS_TIMEOUT", "2.5"),
        ]))
        .expect("config");
        assert_eq!(c.address, "10.0.0.7:29500");
        assert_eq!((c.rank, c.world_size), (3, 8));
        assert_eq!(c.timeout, Duration::from_millis(2500));
        let c = RendezvousConfig::from_lookup(env(&[
            ("MASTER_ADDR", "::1"),
            ("MASTER_PORT", "29500"),
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
        ]))
        .expect("ipv6");
        assert_eq!(c.address, "[::1]:29500");
        assert_eq!(c.timeout, Duration::from_secs(60));
        let e = RendezvousConfig::from_lookup(env(&[("MASTER_ADDR", "h")])).unwrap_err();
        assert!(e.to_string().contains("MASTER_PORT is not set"), "{e}");
        let e =
            RendezvousConfig::from_lookup(env(&[("MASTER_ADDR", "h"), ("MASTER_PORT", "70000")]))
                .unwrap_err();
        assert!(e.to_string().contains("not a port"), "{e}");
        let bad = RendezvousConfig::new("127.0.0.1:1", 2, 2);
        assert!(Rendezvous::run_with(&bad, || unreachable!()).is_err());
    }
}
