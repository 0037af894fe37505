//! `IpcChannel` between two processes, no GPU: the test binary runs itself
//! again as a child (an environment variable selects the role), the parent
//! sends a handle blob with a real descriptor (an open file it wrote)
//! over a Unix socket (`SCM_RIGHTS`), and the child reads the file through
//! the descriptor it received, parses the blob, and sends back what it
//! read. A message with too many descriptors is refused before `sendmsg`.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::process::Command;

use cudakit::ipc::{IpcChannel, MAX_FDS};
use cudakit::{Error, IpcError};

const ROLE: &str = "CUDAKIT_IPC_CHANNEL_CHILD";

fn child(socket: &str) {
    let channel = IpcChannel::connect(socket).expect("connect");
    let (bytes, fds) = channel.recv_message().expect("recv");
    assert_eq!(fds.len(), 2, "two descriptors came");
    let mut contents = Vec::new();
    for fd in fds {
        let mut file = std::fs::File::from(fd);
        file.seek(SeekFrom::Start(0)).expect("seek");
        let mut s = String::new();
        file.read_to_string(&mut s)
            .expect("read through the descriptor");
        contents.push(s);
    }
    let reply = format!(
        "{}|{}|{}",
        String::from_utf8_lossy(&bytes),
        contents[0],
        contents[1]
    );
    channel.send_message(reply.as_bytes(), &[]).expect("reply");
}

fn temp_file(tag: &str, text: &str) -> (std::fs::File, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!(
        "cudakit-ipc-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .expect("temp file");
    f.write_all(text.as_bytes()).expect("write");
    (f, path)
}

#[test]
fn descriptors_cross_to_another_process() {
    if let Ok(socket) = std::env::var(ROLE) {
        child(&socket);
        return;
    }
    let dir = std::env::temp_dir();
    let socket = dir.join(format!("cudakit-ipc-chan-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut kid = Command::new(std::env::current_exe().expect("own executable"))
        .args([
            "descriptors_cross_to_another_process",
            "--exact",
            "--nocapture",
        ])
        .env(ROLE, &socket)
        .spawn()
        .expect("spawn the child");
    let (stream, _) = listener.accept().expect("accept");
    let channel = IpcChannel::new(stream);
    let (a, pa) = temp_file("a", "first file");
    let (b, pb) = temp_file("b", "second file");
    channel
        .send_message(b"handle blob", &[a.as_fd(), b.as_fd()])
        .expect("send");
    // The parent's descriptors stay open and usable.
    drop((a, b));
    let (reply, fds) = channel.recv_message().expect("reply");
    assert!(fds.is_empty());
    assert_eq!(
        String::from_utf8(reply).expect("utf-8"),
        "handle blob|first file|second file"
    );
    assert!(kid.wait().expect("wait").success(), "the child failed");
    for p in [pa, pb, socket] {
        let _ = std::fs::remove_file(p);
    }

    // More descriptors than one message carries: refused before sendmsg.
    let (x, _y) = IpcChannel::pair().expect("pair");
    let many: Vec<OwnedFd> = (0..=MAX_FDS)
        .map(|_| std::fs::File::open("/dev/null").expect("open").into())
        .collect();
    let borrowed: Vec<_> = many.iter().map(|f| f.as_fd()).collect();
    assert!(matches!(
        x.send_message(b"x", &borrowed),
        Err(Error::Ipc(IpcError::Channel {
            call: "sendmsg",
            ..
        }))
    ));
}
