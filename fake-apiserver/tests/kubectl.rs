//! kubectl against the server over HTTP on loopback: apply, get (with printer columns),
//! get -w, describe, patch, server-side apply conflicts and delete; and the typed commands
//! (`create namespace`, `create configmap`, `run`, `scale`, ...), which kubectl 1.32 and
//! later send as protobuf.

use std::path::PathBuf;
use std::process::{Command, Output};

use fake_apiserver::FakeApiServer;

struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()));
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args);
        match stdin {
            Some(input) => {
                use std::io::Write;
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                let mut child = cmd
                    .spawn()
                    .expect("kubectl runs (install it, or set KUBECTL)");
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(input.as_bytes())
                    .unwrap();
                child.wait_with_output().unwrap()
            }
            None => cmd
                .output()
                .expect("kubectl runs (install it, or set KUBECTL)"),
        }
    }

    fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

const CRD_AND_CONFIGMAP: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.samplecontroller.k8s.io
  annotations:
    # A *.k8s.io group needs this, as Go's sample-controller CRD has it.
    api-approved.kubernetes.io: "unapproved, experimental-only"
spec:
  group: samplecontroller.k8s.io
  names: {kind: Foo, plural: foos, singular: foo, shortNames: [fo]}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Deployment, type: string, jsonPath: .spec.deploymentName}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              deploymentName: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo, labels: {app: demo}}
data: {a: b}
"#;

const FOO: &str = "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: example}\nspec: {deploymentName: web, replicas: 1}\n";

/// Runs `script` with kubectl pointed at a fresh server on loopback.
async fn with_kubectl(test: &str, script: impl FnOnce(Kubectl) + Send + 'static) {
    let server = FakeApiServer::new();
    let served = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = std::env::temp_dir().join(format!(
        "fake-apiserver-kubectl-{test}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, served.kubeconfig()).unwrap();
    let k = Kubectl {
        kubeconfig,
        cache: dir.join("cache"),
    };
    let result = tokio::task::spawn_blocking(move || script(k)).await;
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_against_the_http_server() {
    with_kubectl("apply", |k| {
        let applied = k.ok(
            &["apply", "-f", "-"],
            Some(CRD_AND_CONFIGMAP),
        );
        assert!(
            applied.contains(
                "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created"
            ),
            "{applied}"
        );
        assert!(applied.contains("configmap/demo created"), "{applied}");
        k.ok(&["apply", "-f", "-"], Some(FOO));
        // Validation on (kubectl's default): the server is asked to refuse unknown fields.
        let strict = k.run(&["apply", "-f", "-"], Some(&FOO.replace("replicas: 1", "replicas: 1, bogus: 2")));
        let err = String::from_utf8_lossy(&strict.stderr);
        assert!(
            err.contains("Foo in version \"v1alpha1\" cannot be handled as a Foo: strict decoding error: unknown field \"spec.bogus\""),
            "{err}"
        );
        // kubectl explain reads the OpenAPI v3 documents, for built-in and custom kinds.
        let explained = k.ok(&["explain", "configmap.data"], None);
        assert!(explained.contains("FIELD: data <map[string]string>"), "{explained}");
        let explained = k.ok(&["explain", "foo.spec"], None);
        assert!(explained.contains("deploymentName\t<string>"), "{explained}");
        let explained = k.ok(&["explain", "deployment.spec.template.spec.containers.ports"], None);
        assert!(explained.contains("containerPort\t<integer> -required-"), "{explained}");

        let table = k.ok(&["get", "foos"], None);
        assert!(table.starts_with("NAME      DEPLOYMENT   AGE"), "{table}");
        assert!(table.contains("example   web"), "{table}");
        assert_eq!(
            k.ok(
                &["get", "fo", "example", "-o", "jsonpath={.spec.replicas}"],
                None
            ),
            "1"
        );

        let invalid = k.run(
            &[
                "patch",
                "foo",
                "example",
                "--type=merge",
                "-p",
                r#"{"spec":{"replicas":30}}"#,
            ],
            None,
        );
        let err = String::from_utf8_lossy(&invalid.stderr);
        assert!(
            !invalid.status.success()
                && err.contains("spec.replicas in body should be less than or equal to 10"),
            "{err}"
        );
        k.ok(
            &[
                "patch",
                "foo",
                "example",
                "--type=merge",
                "-p",
                r#"{"spec":{"replicas":3}}"#,
            ],
            None,
        );
        let conflict = k.run(
            &["apply", "--server-side", "-f", "-"],
            Some(FOO),
        );
        let err = String::from_utf8_lossy(&conflict.stderr);
        assert!(
            err.contains(
                "conflict with \"kubectl-patch\" using samplecontroller.k8s.io/v1alpha1: .spec.replicas"
            ),
            "{err}"
        );
        k.ok(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                                "-f",
                "-",
            ],
            Some(FOO),
        );
        assert_eq!(
            k.ok(
                &["get", "foo", "example", "-o", "jsonpath={.spec.replicas}"],
                None
            ),
            "1"
        );

        k.ok(
            &["patch", "configmap", "demo", "-p", r#"{"data":{"c":"d"}}"#],
            None,
        );
        let described = k.ok(&["describe", "configmap", "demo"], None);
        assert!(
            described.contains("Labels:       app=demo") && described.contains("c:"),
            "{described}"
        );

        // get -w sees the deletion.
        let mut watch = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .arg("--kubeconfig")
            .arg(&k.kubeconfig)
            .arg("--cache-dir")
            .arg(&k.cache)
            .args([
                "get",
                "configmaps",
                "-w",
                "--output-watch-events",
                "--request-timeout=10s",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        k.ok(&["delete", "configmap", "demo"], None);
        std::thread::sleep(std::time::Duration::from_millis(1000));
        watch.kill().unwrap();
        let watched =
            String::from_utf8_lossy(&watch.wait_with_output().unwrap().stdout).into_owned();
        assert!(
            watched.contains("ADDED") && watched.contains("DELETED"),
            "{watched}"
        );

        let deleted = k.ok(&["delete", "foo", "example"], None);
        assert!(deleted.contains("\"example\" deleted"), "{deleted}");
        let missing = k.run(&["get", "foo", "example"], None);
        assert!(String::from_utf8_lossy(&missing.stderr).contains("NotFound"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_typed_commands_work_against_the_http_server() {
    with_kubectl("typed", |k| {
        let get = |args: &[&str]| k.ok(&[&["get", "-n", "typed"], args].concat(), None);
        assert_eq!(
            k.ok(&["create", "namespace", "typed"], None).trim(),
            "namespace/typed created"
        );
        let n = ["-n", "typed"];
        let mut made = Vec::new();
        for cmd in [
            &[
                "create",
                "configmap",
                "c",
                "--from-literal=a=b",
                "--from-literal=empty=",
            ][..],
            &["create", "secret", "generic", "s", "--from-literal=k=v"],
            &["create", "serviceaccount", "robot"],
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--replicas=1",
                "--port=80",
            ],
            &["run", "p", "--image=nginx", "--labels=app=p"],
            &[
                "create",
                "role",
                "reader",
                "--verb=get,list",
                "--resource=pods",
            ],
            &[
                "create",
                "rolebinding",
                "read",
                "--role=reader",
                "--serviceaccount=typed:robot",
            ],
            &["create", "job", "once", "--image=busybox", "--", "true"],
        ] {
            made.push(k.ok(&[&n[..], cmd].concat(), None).trim().to_owned());
        }
        assert_eq!(
            made,
            [
                "configmap/c created",
                "secret/s created",
                "serviceaccount/robot created",
                "deployment.apps/web created",
                "pod/p created",
                "role.rbac.authorization.k8s.io/reader created",
                "rolebinding.rbac.authorization.k8s.io/read created",
                "job.batch/once created",
            ]
        );
        assert_eq!(
            get(&["configmap", "c", "-o", "jsonpath={.data}"]),
            r#"{"a":"b","empty":""}"#
        );
        assert_eq!(get(&["secret", "s", "-o", "jsonpath={.data.k}"]), "dg==");
        assert_eq!(
            get(&["pod", "p", "-o", "jsonpath={.spec.containers[0].image}"]),
            "nginx"
        );
        assert_eq!(
            get(&["rolebinding", "read", "-o", "jsonpath={.subjects[0].kind}"]),
            "ServiceAccount"
        );

        k.ok(
            &[&n[..], &["scale", "deployment", "web", "--replicas=3"]].concat(),
            None,
        );
        assert_eq!(
            get(&["deployment", "web", "-o", "jsonpath={.spec.replicas}"]),
            "3"
        );
        k.ok(
            &[&n[..], &["label", "configmap", "c", "tier=cache"]].concat(),
            None,
        );
        k.ok(
            &[&n[..], &["annotate", "configmap", "c", "note=hi"]].concat(),
            None,
        );
        assert_eq!(
            get(&[
                "configmap",
                "-l",
                "tier=cache",
                "-o",
                "jsonpath={.items[*].metadata.annotations.note}"
            ]),
            "hi"
        );
        let exposed = k.ok(
            &[&n[..], &["expose", "deployment", "web", "--port=80"]].concat(),
            None,
        );
        assert_eq!(exposed.trim(), "service/web exposed");
        assert_eq!(
            get(&["service", "web", "-o", "jsonpath={.spec.selector.app}"]),
            "web"
        );

        // A typed delete sends its DeleteOptions as protobuf too.
        let deleted = k.ok(
            &[&n[..], &["delete", "pod", "p", "--wait=false"]].concat(),
            None,
        );
        assert!(deleted.contains("pod \"p\" deleted"), "{deleted}");
        let refused = k.run(&["create", "namespace", "Bad_Name"], None);
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && err.contains("metadata.name: Invalid value: \"Bad_Name\""),
            "{err}"
        );
    })
    .await;
}
