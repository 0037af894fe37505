//! The rendezvous of issue 24 end to end on one machine, with the stand-in
//! libcuda and NCCL: three ranks on three (stand-in) devices meet over
//! loopback, rank 0 makes the id once, and each rank's communicator is
//! made with that id, its rank and the world size. The rendezvous's own
//! failure cases are unit tests in `multi::nccl::rendezvous`.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, `CUDAKIT_LIBNCCL`), hence one test in
//! a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::time::Duration;

use cudakit::multi::nccl::{Rendezvous, RendezvousConfig};
use cudakit::Context;

#[test]
fn three_ranks_meet_over_loopback_and_make_their_communicators() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    std::env::set_var("CUDAKIT_LIBNCCL", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let set_devices = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0") }
        .expect("stub_set_device_count");
    // SAFETY: as above.
    let init_ids = unsafe {
        lib.get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"stub_nccl_init_ids\0")
    }
    .expect("stub_nccl_init_ids");
    // SAFETY: a plain value.
    unsafe { set_devices(3) };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let ranks: Vec<(usize, usize, [u8; 128])> = std::thread::scope(|t| {
        let handles: Vec<_> = (0..3)
            .map(|rank| {
                t.spawn(move || {
                    let ctx = Context::new(rank).expect("device");
                    let config = RendezvousConfig::new(format!("127.0.0.1:{port}"), rank, 3)
                        .timeout(Duration::from_secs(20));
                    let r = Rendezvous::run(&config).expect("rendezvous");
                    let comm = r
                        .communicator(&ctx, Duration::from_secs(20))
                        .expect("communicator");
                    (comm.rank(), comm.size(), r.id.as_bytes())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect()
    });
    for (k, &(rank, size, id)) in ranks.iter().enumerate() {
        assert_eq!((rank, size), (k, 3));
        assert_eq!(id, ranks[0].2, "rank {k} has rank 0's id");
    }
    let mut recs = [0u8; 16 * 8];
    // SAFETY: 8 records of 16 writable bytes.
    let n = unsafe { init_ids(recs.as_mut_ptr(), 8) };
    assert_eq!(n, 3, "one ncclCommInitRankConfig per rank");
    let mut seen_ranks: Vec<i32> = (0..3)
        .map(|k| {
            assert_eq!(
                recs[16 * k..16 * k + 8],
                ranks[0].2[..8],
                "NCCL got rank 0's id"
            );
            i32::from_le_bytes(recs[16 * k + 8..16 * k + 12].try_into().expect("4 bytes"))
        })
        .collect();
    seen_ranks.sort_unstable();
    assert_eq!(seen_ranks, [0, 1, 2]);
}
