//! NCCL groups against a stand-in NCCL (the test-only stand-in libcuda
//! exports the NCCL symbols too and counts what reaches them), with two
//! stand-in devices. Checks on a machine without a GPU that a group is
//! never issued in part, that overlapping send and receive buffers and
//! collectives during a capture are refused before NCCL.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, `CUDAKIT_LIBNCCL`), hence one test in
//! its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::multi::nccl::{self, Communicator, ReduceOp};
use cudakit::{Context, Error};

#[test]
fn groups_are_refused_before_nccl_or_issued_whole() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    std::env::set_var("CUDAKIT_LIBNCCL", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let devices = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0") }
        .expect("stub_set_device_count");
    // SAFETY: as above.
    let counts = unsafe { lib.get::<unsafe extern "C" fn(*mut u64)>(b"stub_nccl_counts\0") }
        .expect("stub_nccl_counts");
    let read = || {
        let mut c = [0u64; 3];
        // SAFETY: three writable u64s.
        unsafe { counts(c.as_mut_ptr()) };
        c
    };
    // SAFETY: a plain value.
    unsafe { devices(2) };

    let (c0, c1) = (
        Context::new(0).expect("device 0"),
        Context::new(1).expect("device 1"),
    );
    let comms = Communicator::init_all(&[&c0, &c1]).expect("communicators");
    let (s0, s1) = (c0.stream().expect("stream"), c1.stream().expect("stream"));
    let (a0, r0) = (c0.alloc::<f32>(64).unwrap(), c0.alloc::<f32>(64).unwrap());
    let (a1, r1) = (c1.alloc::<f32>(64).unwrap(), c1.alloc::<f32>(64).unwrap());

    // A whole group reaches NCCL once, with both calls.
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.all_reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Sum)?;
                g.all_reduce(&comms[1], t, &s1, &a1, &r1, ReduceOp::Sum)
            })
        })
    })
    .expect("a whole group");
    assert_eq!(read(), [1, 2, 0]);

    // Overlapping send and receive buffers, not in place: refused when
    // queued.
    let big = c0.alloc::<f32>(65).unwrap();
    let err = c0
        .scope(|s| {
            nccl::group(|g| {
                g.all_reduce(
                    &comms[0],
                    s,
                    &s0,
                    big.view(0..64)?,
                    big.view(1..65)?,
                    ReduceOp::Sum,
                )
            })
        })
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(read(), [1, 2, 0], "nothing reached NCCL");

    // A collective during a capture: refused.
    let err = c0
        .scope(|s| {
            let captured = s.capture(&s0, || {
                nccl::group(|g| g.all_reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Sum))
            });
            captured.map(drop)
        })
        .unwrap_err();
    assert!(matches!(err, Error::IllegalDuringCapture { .. }), "{err}");
    assert_eq!(read(), [1, 2, 0], "nothing reached NCCL");

    // Ranks of one process whose calls do not match: refused before NCCL
    // (a rank without its matching call would wait forever).
    macro_rules! mismatch {
        (|$g:ident, $s:ident, $t:ident| $body:expr) => {
            c0.scope(|$s| c1.scope(|$t| nccl::group(|$g| $body)))
                .unwrap_err()
        };
    }
    // Each case names the part of the check it must reach: a case that
    // failed an earlier comparison (say, the number of collectives) would
    // prove nothing about the later one.
    let cases: [(&str, &str, Error); 4] = [
        (
            "a collective on one rank only",
            "rank 0 makes 1 collective(s), rank 1 makes 0",
            mismatch!(|g, s, _t| g.all_reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Sum)),
        ),
        (
            "different counts",
            "collective 0 of the group: the count is 63 on rank 0, 64 on rank 1",
            mismatch!(|g, s, t| {
                g.all_reduce(
                    &comms[0],
                    s,
                    &s0,
                    a0.view(0..63)?,
                    r0.view(0..63)?,
                    ReduceOp::Sum,
                )?;
                g.all_reduce(&comms[1], t, &s1, &a1, &r1, ReduceOp::Sum)
            }),
        ),
        (
            "different operators",
            "collective 0 of the group: the operator is",
            mismatch!(|g, s, t| {
                g.all_reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Sum)?;
                g.all_reduce(&comms[1], t, &s1, &a1, &r1, ReduceOp::Max)
            }),
        ),
        (
            "a send without its receive",
            "rank 0 sends",
            mismatch!(|g, s, t| {
                g.send(&comms[0], s, &s0, &a0, 1)?;
                g.recv(&comms[1], t, &s1, r1.view(0..32)?, 0)
            }),
        ),
    ];
    for (what, expected, err) in cases {
        match &err {
            Error::CollectiveMismatch { reason, .. } => assert!(
                reason.contains(expected),
                "{what}: expected a mismatch saying {expected:?}, got {err}"
            ),
            _ => panic!("{what}: {err}"),
        }
    }
    // Matching point-to-point calls pass.
    c0.scope(|s| {
        c1.scope(|t| {
            nccl::group(|g| {
                g.send(&comms[0], s, &s0, &a0, 1)?;
                g.recv(&comms[1], t, &s1, &r1, 0)
            })
        })
    })
    .expect("a matching send and receive");
    assert_eq!(read(), [2, 4, 0], "only the matching group reached NCCL");

    // A member aborted after its call was queued: the whole group is
    // refused before ncclGroupStart (issued in part, the other rank's
    // kernel would wait forever).
    let err = c0
        .scope(|s| {
            c1.scope(|t| {
                nccl::group(|g| {
                    g.all_reduce(&comms[0], s, &s0, &a0, &r0, ReduceOp::Sum)?;
                    g.all_reduce(&comms[1], t, &s1, &a1, &r1, ReduceOp::Sum)?;
                    comms[1].abort();
                    Ok(())
                })
            })
        })
        .unwrap_err();
    assert!(
        matches!(err, Error::CommunicatorAborted { rank: 1, .. }),
        "{err}"
    );
    assert_eq!(
        read(),
        [2, 4, 1],
        "no group started; one abort (the caller's)"
    );
}
