"""kafka-cluster's commands beyond cluster-id (Kafka 4.4's ClusterTool), over pk's wire client:
list-endpoints (DescribeCluster), api-versions (each node's ApiVersions), unregister
(UnregisterBroker) and unregister-controller (UnregisterController)."""

from __future__ import annotations

from pk.engine import protocol as kp

from .backends.kafka_admin import known_error
from .broker_api_versions import node_text

BROKERS, CONTROLLERS = 1, 2  # DescribeCluster endpoint_type


def describe_cluster(client, endpoint_type: int, include_fenced: bool) -> list[dict]:
    answer = client.call(kp.ApiKey.DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False,
                                                          "endpoint_type": endpoint_type,
                                                          "include_fenced_brokers": include_fenced})
    if answer["error_code"]:
        raise known_error(answer["error_code"], answer["error_message"])
    return answer["brokers"]


def endpoint_lines(nodes: list[dict], controllers: bool) -> list[str]:
    """ClusterTool's table: the HOST column as wide as the longest host, RACK as the longest
    rack (10 without any); a controller has no STATE column."""
    host_w = max((len(n["host"]) for n in nodes), default=100)
    rack_w = max((len(n["rack"]) for n in nodes if n["rack"] is not None), default=10)

    def row(*cells):
        widths = [10, host_w, 10, rack_w] + ([] if controllers else [10]) + [15]
        return " ".join(f"{c:<{w}}" for c, w in zip(cells, widths))

    if controllers:
        lines = [row("ID", "HOST", "PORT", "RACK", "ENDPOINT_TYPE")]
        lines += [row(str(n["broker_id"]), n["host"], str(n["port"]), ("null" if n["rack"] is None else n["rack"]), "controller") for n in nodes]
    else:
        lines = [row("ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE")]
        lines += [row(str(n["broker_id"]), n["host"], str(n["port"]), ("null" if n["rack"] is None else n["rack"]),
                      "fenced" if n["is_fenced"] else "unfenced", "broker") for n in nodes]
    return lines


def api_versions_text(client) -> str:
    """`<node> -> (<its APIs>)` for each broker, by id."""
    out = []
    for broker in sorted(client.brokers(), key=lambda b: b.node_id):
        try:
            out.append(f"{broker} -> {node_text(client.api_versions(broker.node_id))}\n")
        except (OSError, ConnectionError) as exc:
            out.append(f"{broker} -> ERROR: {exc}\n")
    return "".join(out)


def unregister(client, api_key: int, node_id: int) -> bool:
    """Unregister a broker (UnregisterBroker) or controller (UnregisterController): False when
    the cluster does not offer the API."""
    if int(api_key) not in client.api_versions(None):
        return False
    body = {"broker_id": node_id} if api_key == kp.ApiKey.UNREGISTER_BROKER else {"controller_id": node_id}
    answer = client.call(api_key, 0, body)
    if answer["error_code"]:
        raise known_error(answer["error_code"], answer.get("error_message"))
    return True
