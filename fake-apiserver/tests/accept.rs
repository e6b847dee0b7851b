//! The HTTP server when the process runs out of file descriptors: it waits for connections
//! to close instead of spinning on `accept` (Linux: it reads the process's CPU time).

use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// User plus system CPU time of `pid`, in clock ticks (`/proc/<pid>/stat`, fields 14 and 15).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The command name may hold spaces; the fields after it are space-separated.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn out_of_file_descriptors_the_server_waits_instead_of_spinning() {
    if !std::path::Path::new("/proc/self/stat").exists() {
        eprintln!("skipped: needs /proc");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fake-apiserver-accept-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 32 && exec \"$0\" --port 0 --kubeconfig-out \"$1\"")
        .arg(env!("CARGO_BIN_EXE_fake-apiserver"))
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
        if let Some(rest) = text.split("http://127.0.0.1:").nth(1) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(p) = digits.parse::<u16>() {
                break p;
            }
        }
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    // More connections than the server has descriptors for: the rest wait in the backlog.
    let conns: Vec<TcpStream> = (0..64)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(child.id()) - before;
    drop(conns);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    // A spinning accept loop burns the whole 2 s (about 200 ticks).
    assert!(
        used < 50,
        "{used} ticks of CPU in 2 s while out of descriptors"
    );
}
