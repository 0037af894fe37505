//! NVTX through a stand-in tool (`tests/stub-nvtx`, an injection library
//! that records every push, pop, mark and domain it receives), named in
//! `NVTX_INJECTION64_PATH` as a profiler would name its own. Checks the v3
//! injection protocol (cudakit's export tables and slots), nesting, names,
//! colours and domains, and, with `CUDAKIT_NVTX=1`, the ranges of cudakit's
//! own compiles, module loads, launches and copies (on the stand-in
//! libcuda).
//!
//! Process-global (the environment, the tool's log), hence one test in its
//! own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::nvtx::{self, Color, Domain};
use cudakit::{params, Context, LaunchConfig};

fn take(lib: &libloading::Library) -> Vec<String> {
    // SAFETY: exported by the stand-in tool with this signature.
    let f =
        unsafe { lib.get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"stub_nvtx_take\0") }
            .expect("stub_nvtx_take");
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: `buf` has that many writable bytes.
    let n = unsafe { f(buf.as_mut_ptr(), buf.len()) };
    assert!(n <= buf.len(), "log larger than the buffer");
    String::from_utf8(buf[..n].to_vec())
        .expect("utf-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn ranges_marks_and_domains_reach_the_tool() {
    let tool = stub::build_nvtx_stub();
    let cuda = stub::build_stub("");
    std::env::set_var("NVTX_INJECTION64_PATH", &tool);
    std::env::set_var("CUDAKIT_NVTX", "1");
    std::env::set_var("CUDAKIT_LIBCUDA", &cuda);
    // SAFETY: the stand-in's initialisers are Rust statics only; dlopen of
    // the same path gives the handle cudakit's load got, so the same log.
    let lib = unsafe { libloading::Library::new(&tool) }.expect("open the stand-in tool");

    assert!(nvtx::is_attached(), "not attached: {:?}", nvtx::status());
    // SAFETY: exported by the stand-in with this signature.
    let inits = unsafe { lib.get::<unsafe extern "C" fn() -> usize>(b"stub_nvtx_inits\0") }
        .expect("stub_nvtx_inits");
    // SAFETY: no arguments.
    assert_eq!(unsafe { inits() }, 1, "initialized once");
    // The automatic ranges' domain is created when first needed; drain it.
    let _ = take(&lib);

    {
        let outer = nvtx::range("outer");
        assert!(outer.is_recorded());
        nvtx::mark("in outer");
        {
            let _inner = nvtx::range_colored("inner", Color::rgb(0x10, 0x20, 0x30));
            nvtx::mark_colored("deep", Color(0x80ff_0000));
        }
        // A name with an interior NUL is cut there, never a panic.
        let _cut = nvtx::range("cut\0here");
    }
    let d = Domain::new("mine");
    {
        let _r = d.range("in mine");
        d.mark("tick");
        let _g = nvtx::range("global while mine");
    }
    drop(d);
    assert_eq!(
        take(&lib),
        [
            "push - 1 outer -",
            "mark - in outer -",
            "push - 2 inner ff102030",
            "mark - deep 80ff0000",
            "pop - 2",
            "push - 2 cut -",
            "pop - 2",
            "pop - 1",
            "domain mine",
            "push mine 1 in mine -",
            "mark mine tick -",
            "push - 1 global while mine -",
            "pop - 1",
            "pop mine 1",
            "destroy mine",
        ]
    );

    // Ranges of other threads nest on their own.
    std::thread::spawn(|| {
        let _a = nvtx::range("thread a");
        let _b = nvtx::range("thread b");
    })
    .join()
    .unwrap();
    assert_eq!(
        take(&lib),
        [
            "push - 1 thread a -",
            "push - 2 thread b -",
            "pop - 2",
            "pop - 1"
        ]
    );

    // A forgotten guard leaves its range open; nothing else happens.
    std::mem::forget(nvtx::range("forgotten"));
    assert_eq!(take(&lib), ["push - 1 forgotten -"]);
    // (The tool's global depth on this thread stays at 1 from here; the
    // ranges below are of the `cudakit` domain, which nests on its own.)

    // cudakit's own work, in the `cudakit` domain (CUDAKIT_NVTX=1).
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let buf = ctx.upload(&[1.0f32, 2.0, 3.0]).expect("upload");
    let back = buf.to_vec().expect("download");
    assert_eq!(back.len(), 3);
    // SAFETY: the stand-in libcuda's initialisers are Rust statics only.
    let cu = unsafe { libloading::Library::new(&cuda) }.expect("open the stand-in libcuda");
    // SAFETY: exported by the stand-in with this signature.
    let set_params =
        unsafe { cu.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
            .expect("stub_set_params");
    // (float*, int) at offsets 0 and 8.
    // SAFETY: two (offset, size) pairs.
    unsafe { set_params([0usize, 8, 8, 4].as_ptr(), 2) };
    let f = module.function("scale").expect("function");
    let stream = ctx.stream().expect("stream");
    let p = params![&buf, 3i32];
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &LaunchConfig::new(1, 32), &p) })
        .expect("launch");
    let log = take(&lib);
    let own: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("push cudakit") || l.starts_with("pop cudakit"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        own,
        [
            "push cudakit 1 module load -",
            "pop cudakit 1",
            "push cudakit 1 copy HtoD -",
            "pop cudakit 1",
            "push cudakit 1 copy DtoH -",
            "pop cudakit 1",
            "push cudakit 1 scale -",
            "pop cudakit 1",
        ],
        "whole log: {log:#?}"
    );
}
