"""Build in an OVN Northbound database the topology OpenStack Neutron 29.0.0 (2026.1) makes with
its OVN-native BGP service plugin, by running Neutron's own, unmodified code against it.

Two layers, each written by the code Neutron itself uses for it. The ML2/OVN layer: a flat
provider network and subnet, a geneve tenant network and subnet, one VM port, a router (gateway
on the provider network, interface on the tenant subnet) and one floating IP, written through
ML2/OVN's NB API (``impl_idl_ovn.OvsdbNbOvnIdl`` and its command classes) with the column values
``ovn_client.OVNClient`` computes for them with the default configuration; the Neutron database
objects OVNClient would read are replaced by plain values. The BGP layer: the BGP worker's
``BGPTopologyReconciler`` (its NB IDL, lock ``bgp_topology_lock`` and NB row events; with
``--sb`` also its SB IDL, else a stand-in for the SB's Chassis_Private rows built from
``--chassis`` and ``--bgp-bridges``), its full sync, and the plugin's ``LeakSubnetCommand`` for
the tenant subnet (what ``PUT /subnets/<id> {"leak_routes": true}`` does).

``--mode events`` (the default, as in a live deployment) starts the worker first, then writes the
ML2 resources and lets the reconciler's row events build the provider part. ``--mode full-sync``
writes the ML2 resources first and then runs one full sync (a worker restart with everything
present: it reproduces neutron 29.0.0's duplicate bgp-lr-main policies). Use a fresh NB per
build; a second build on the same NB leaves the ML2 layer as it is. ``--remove``, on an NB built
with the same ``--name`` and parameters, deletes the floating IP and then the VM port the way
ML2/OVN does (``OVNClient``'s own deletion code, without its Neutron database revision
bookkeeping), and waits for the reconciler's row events to undo what the BGP plugin derived from
them (the floating IP in the ``arp_proxy`` option of bgp-lr-main's interconnect port).

The summary (``--json FILE``, ``-`` for stdout and nothing else) has the parameters, the Neutron
IDs, the NB rows that matter to BGP, the SB port bindings a real ovn-controller would make
(``ovn-sbctl lsp-bind``), each chassis's OVS external_ids as the neutron OVN agent's BGP
extension leaves them, and the timings. Without ``-`` it also prints ``ovn-nbctl show`` (the
command comes from the ``OVN_NBCTL`` environment variable when set) and a readable listing.

It needs a virtualenv with ``neutron==29.0.0`` installed and runs with that virtualenv's python;
no Neutron code is copied into this repository:

    $(scripts/neutron-venv.sh) scripts/neutron_topology.py \\
        --nb unix:/run/ovn/ovnnb_db.sock --chassis node1 --chassis node2 --json -
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import os
import shlex
import subprocess
import sys
import time
import types
import uuid
import warnings
from collections.abc import Callable, Sequence
from typing import Any

warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")

NS = uuid.UUID("6c1f0e0e-4b1d-4c55-9b0e-0b9e0b9e0b9e")
MTU_PROVIDER = 1500
MTU_TENANT = 1442


def _uid(*parts: str) -> str:
    return str(uuid.uuid5(NS, "/".join(parts)))


def _mac(*parts: str) -> str:
    b = uuid.uuid5(NS, "mac/" + "/".join(parts)).bytes
    return f"fa:16:3e:{b[0]:02x}:{b[1]:02x}:{b[2]:02x}"


@dataclasses.dataclass
class Params:
    """What to build; the empty defaults are derived by fill_defaults()."""

    nb: str
    chassis: list[str]
    # {chassis: [bridge, ...]}: the SB Chassis_Private external_ids:neutron-bgp-bridges the neutron
    # OVN agent's BGP extension writes from OVS external_ids:neutron-bgp-peer-bridges
    bgp_bridges: dict[str, list[str]]
    provider_physnet: str = "physnet1"
    provider_cidr: str = "172.24.4.0/24"
    provider_gateway: str = "172.24.4.1"
    router_gw_ip: str = ""  # provider_gateway + 1
    tenant_cidr: str = "10.0.0.0/24"
    tenant_gateway: str = ""  # the tenant subnet's first host
    vm_ip: str = ""  # tenant_gateway + 9
    vm_chassis: str = ""  # the first chassis
    fip: str = ""  # provider_gateway + 99
    gw_chassis: list[str] = dataclasses.field(default_factory=list)  # HA order; the chassis
    leak_tenant_subnet: bool = True
    distributed_fip: bool = False  # [ovn] enable_distributed_floating_ip
    sb: str = ""  # a real SB to read Chassis_Private from
    timeout: int = 30
    mode: str = "events"  # or "full-sync"
    name: str = "bgp-lab"  # seed of the deterministic UUIDs and MACs


@dataclasses.dataclass(frozen=True)
class NeutronIds:
    """Deterministic Neutron-style UUIDs of every Neutron resource, seeded by Params.name."""

    prov_net: str
    prov_seg: str
    prov_subnet: str
    ten_net: str
    ten_subnet: str
    router: str
    gw_port: str
    rif_port: str
    vm_port: str
    fip: str
    fip_port: str
    project: str
    device: str

    @classmethod
    def of(cls, name: str) -> NeutronIds:
        return cls(
            prov_net=_uid(name, "net", "provider"),
            prov_seg=_uid(name, "segment", "provider"),
            prov_subnet=_uid(name, "subnet", "provider"),
            ten_net=_uid(name, "net", "tenant"),
            ten_subnet=_uid(name, "subnet", "tenant"),
            router=_uid(name, "router"),
            gw_port=_uid(name, "port", "router-gw"),
            rif_port=_uid(name, "port", "router-if"),
            vm_port=_uid(name, "port", "vm"),
            fip=_uid(name, "floatingip"),
            fip_port=_uid(name, "port", "fip"),
            project=_uid(name, "project").replace("-", ""),
            device=_uid(name, "instance"),
        )


def fill_defaults(p: Params) -> Params:
    """A copy of p with the derived defaults filled in; ValueError if an address is off-net."""
    prov = ipaddress.ip_network(p.provider_cidr)
    ten = ipaddress.ip_network(p.tenant_cidr)
    pgw = ipaddress.ip_address(p.provider_gateway)
    tenant_gateway = p.tenant_gateway or str(next(ten.hosts()))
    q = dataclasses.replace(
        p,
        router_gw_ip=p.router_gw_ip or str(pgw + 1),
        fip=p.fip or str(pgw + 99),
        tenant_gateway=tenant_gateway,
        vm_ip=p.vm_ip or str(ipaddress.ip_address(tenant_gateway) + 9),
        vm_chassis=p.vm_chassis or p.chassis[0],
        gw_chassis=list(p.gw_chassis or p.chassis),
    )
    for addr, net in ((q.router_gw_ip, prov), (q.fip, prov), (q.vm_ip, ten)):
        if ipaddress.ip_address(addr) not in net:
            raise ValueError(f"{addr} is not in {net}")
    return q


def setup_neutron_conf(p: Params) -> Any:
    """oslo.config as the code paths below read it: defaults plus the NB/SB remotes."""
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415 - slow import
    from neutron.conf.services import bgp as bgp_config  # noqa: PLC0415
    from oslo_config import cfg  # noqa: PLC0415

    cfg.CONF([], project="neutron", default_config_files=[], default_config_dirs=[])
    ovn_conf.register_opts()
    if not hasattr(cfg.CONF, "bgp"):
        bgp_config.register_opts(cfg.CONF)
    cfg.CONF.set_override("ovn_nb_connection", [p.nb], "ovn")
    if p.sb:
        cfg.CONF.set_override("ovn_sb_connection", [p.sb], "ovn")
    cfg.CONF.set_override("enable_distributed_floating_ip", p.distributed_fip, "ovn")
    return cfg.CONF


# The ML2/OVN layer, through ML2/OVN's NB API (OvsdbNbOvnIdl) and its commands.


def _ml2_nb_api(p: Params) -> Any:
    from neutron.plugins.ml2.drivers.ovn.mech_driver.ovsdb import (  # noqa: PLC0415
        impl_idl_ovn,
    )
    from ovsdbapp.backend.ovs_idl import connection  # noqa: PLC0415

    idl = connection.OvsdbIdl.from_server(p.nb, "OVN_Northbound")
    conn = connection.Connection(idl, timeout=p.timeout)
    return impl_idl_ovn.OvsdbNbOvnIdl(conn)


def _port_ext_ids(
    ids: NeutronIds, name: str, device_id: str, owner: str, net_id: str, cidrs: str, mtu: int
) -> dict[str, str]:
    """OVNClient._get_port_external_ids() of a port."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415

    return {
        oc.OVN_PORT_NAME_EXT_ID_KEY: name,
        oc.OVN_DEVID_EXT_ID_KEY: device_id,
        oc.OVN_PROJID_EXT_ID_KEY: ids.project,
        oc.OVN_CIDRS_EXT_ID_KEY: cidrs,
        oc.OVN_DEVICE_OWNER_EXT_ID_KEY: owner,
        oc.OVN_NETWORK_NAME_EXT_ID_KEY: utils.ovn_name(net_id),
        oc.OVN_SG_IDS_EXT_ID_KEY: "",
        oc.OVN_REV_NUM_EXT_ID_KEY: "1",
        oc.OVN_PORT_VNIC_TYPE_KEY: "normal",
        oc.OVN_NETWORK_MTU_EXT_ID_KEY: str(mtu),
    }


def _net_params(
    name: str, net_type: str, mtu: int, physnet: str = "", external: bool = False
) -> dict[str, dict[str, Any]]:
    """OVNClient._gen_network_parameters() of a network."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.conf.agent import ovs_conf  # noqa: PLC0415
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415

    ext = {
        oc.OVN_NETWORK_NAME_EXT_ID_KEY: name,
        oc.OVN_NETWORK_MTU_EXT_ID_KEY: str(mtu),
        oc.OVN_REV_NUM_EXT_ID_KEY: "1",
        oc.OVN_AZ_HINTS_EXT_ID_KEY: "",
        oc.OVN_NETTYPE_EXT_ID_KEY: net_type,
    }
    if physnet:
        ext[oc.OVN_PHYSNET_EXT_ID_KEY] = physnet
    other = {
        oc.MCAST_SNOOP: ovs_conf.get_igmp_snooping_enabled(),
        oc.MCAST_FLOOD_UNREGISTERED: ovs_conf.get_igmp_flood_unregistered(),
        oc.VLAN_PASSTHRU: "false",
    }
    if physnet:
        other[oc.LS_OPTIONS_FDB_AGE_THRESHOLD] = ovn_conf.get_fdb_age_threshold()
    if external:
        broadcast = ovn_conf.is_broadcast_arps_to_all_routers_enabled()
        other[oc.LS_OPTIONS_BROADCAST_ARPS_ROUTERS] = "true" if broadcast else "false"
    return {"external_ids": ext, "other_config": other}


def _ml2_networks(api: Any, p: Params, ids: NeutronIds) -> None:
    """OVNClient.create_network() and create_provnet_port()."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.conf.agent import ovs_conf  # noqa: PLC0415
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415
    from neutron_lib import constants as const  # noqa: PLC0415

    prov = _net_params("provider", const.TYPE_FLAT, MTU_PROVIDER, p.provider_physnet, True)
    with api.transaction(check_error=True) as txn:
        txn.add(api.ls_add(network_id=ids.prov_net, may_exist=True, **prov))
        # the same transaction, as in OVNClient.create_network(): the BGP ProviderSwitchEvent
        # needs the localnet port when the switch appears
        txn.add(
            api.create_lswitch_port(
                lport_name=utils.ovn_provnet_port_name(ids.prov_seg),
                lswitch_name=utils.ovn_name(ids.prov_net),
                network_id=ids.prov_net,
                addresses=[oc.UNKNOWN_ADDR],
                external_ids={oc.OVN_PHYSNET_EXT_ID_KEY: p.provider_physnet},
                type=oc.LSP_TYPE_LOCALNET,
                tag_request=[],
                options={
                    "network_name": p.provider_physnet,
                    oc.LSP_OPTIONS_MCAST_FLOOD_REPORTS: ovs_conf.get_igmp_flood_reports(),
                    oc.LSP_OPTIONS_MCAST_FLOOD: ovs_conf.get_igmp_flood(),
                    oc.LSP_OPTIONS_LOCALNET_LEARN_FDB: (
                        "true" if ovn_conf.is_learn_fdb_enabled() else "false"
                    ),
                },
            )
        )
    ten = _net_params("tenant", const.TYPE_GENEVE, MTU_TENANT)
    with api.transaction(check_error=True) as txn:
        txn.add(api.ls_add(network_id=ids.ten_net, may_exist=True, **ten))


def _ml2_subnets(api: Any, p: Params, ids: NeutronIds) -> None:
    """OVNClient._add_subnet_dhcp_options(): the BGP code reads options:router and cidr."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415

    def dhcp(subnet_id: str, net_id: str, cidr: str, gw: str, mtu: int) -> dict[str, Any]:
        return {
            "cidr": cidr,
            "options": {
                "server_id": gw,
                "lease_time": str(ovn_conf.get_ovn_dhcp_default_lease_time()),
                "mtu": str(mtu),
                "router": gw,
                "server_mac": _mac(p.name, "dhcp", subnet_id),
            },
            "external_ids": {
                "subnet_id": subnet_id,
                oc.OVN_NETWORK_ID_EXT_ID_KEY: net_id,
                oc.OVN_REV_NUM_EXT_ID_KEY: "1",
            },
        }

    prov_cidr = str(ipaddress.ip_network(p.provider_cidr))
    ten_cidr = str(ipaddress.ip_network(p.tenant_cidr))
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.add_dhcp_options(
                ids.prov_subnet,
                **dhcp(ids.prov_subnet, ids.prov_net, prov_cidr, p.provider_gateway, MTU_PROVIDER),
            )
        )
        txn.add(
            api.add_dhcp_options(
                ids.ten_subnet,
                **dhcp(ids.ten_subnet, ids.ten_net, ten_cidr, p.tenant_gateway, MTU_TENANT),
            )
        )


def _ml2_vm_port(api: Any, p: Params, ids: NeutronIds) -> None:
    """OVNClient.create_port() of the VM port."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415

    prefixlen = ipaddress.ip_network(p.tenant_cidr).prefixlen
    vm_addr = f"{_mac(p.name, 'vm')} {p.vm_ip}"
    dhcp_row = next(
        r
        for r in api.tables["DHCP_Options"].rows.values()
        if r.external_ids.get("subnet_id") == ids.ten_subnet
    )
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.create_lswitch_port(
                lport_name=ids.vm_port,
                lswitch_name=utils.ovn_name(ids.ten_net),
                network_id=ids.ten_net,
                addresses=[vm_addr],
                external_ids=_port_ext_ids(
                    ids,
                    "vm-port",
                    ids.device,
                    "compute:nova",
                    ids.ten_net,
                    f"{p.vm_ip}/{prefixlen}",
                    MTU_TENANT,
                ),
                parent_name=[],
                tag=[],
                enabled=True,
                options={
                    oc.LSP_OPTIONS_REQUESTED_CHASSIS_KEY: p.vm_chassis,
                    oc.LSP_OPTIONS_MCAST_FLOOD_REPORTS: "true",
                },
                type="",
                port_security=[vm_addr],
                dhcpv4_options=[dhcp_row.uuid],
                dhcpv6_options=[],
            )
        )


def _lrp_ext_ids(lr: str, net_id: str, subnet_id: str, is_gw: bool) -> dict[str, str]:
    """OVNClient._gen_router_port_ext_ids() of a router port."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415

    return {
        oc.OVN_REV_NUM_EXT_ID_KEY: "1",
        oc.OVN_SUBNET_EXT_IDS_KEY: subnet_id,
        oc.OVN_NETWORK_NAME_EXT_ID_KEY: utils.ovn_name(net_id),
        oc.OVN_ROUTER_IS_EXT_GW: str(is_gw),
        oc.OVN_ROUTER_NAME_EXT_ID_KEY: lr,
    }


def _ml2_router(api: Any, p: Params, ids: NeutronIds) -> None:
    """OVNClient.create_router(), _add_router_ext_gw(), _create_lrouter_port(),
    update_nat_rules() and create_router_port(), with the router's two Neutron ports."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415
    from neutron_lib import constants as const  # noqa: PLC0415

    prov_net = ipaddress.ip_network(p.provider_cidr)
    ten_net = ipaddress.ip_network(p.tenant_cidr)
    lr = utils.ovn_name(ids.router)
    gw_lrp = utils.ovn_lrouter_port_name(ids.gw_port)
    rif_lrp = utils.ovn_lrouter_port_name(ids.rif_port)
    gw_mac, rif_mac = _mac(p.name, "gw"), _mac(p.name, "rif")
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.lr_add(
                router=lr,
                may_exist=True,
                enabled=True,
                external_ids={
                    oc.OVN_ROUTER_NAME_EXT_ID_KEY: "router1",
                    oc.OVN_REV_NUM_EXT_ID_KEY: "1",
                    oc.OVN_AZ_HINTS_EXT_ID_KEY: "",
                },
                options={
                    "always_learn_from_arp_request": "false",
                    "dynamic_neigh_routers": "true",
                    oc.LR_OPTIONS_MAC_AGE_LIMIT: ovn_conf.get_ovn_mac_binding_age_threshold(),
                },
            )
        )
    # the router's Neutron ports (create_port), later made router-type LSPs by
    # set_lrouter_port_in_lswitch_port
    no_security: dict[str, Any] = {
        "parent_name": [],
        "tag": [],
        "enabled": True,
        "options": {},
        "type": "",
        "port_security": [],
        "dhcpv4_options": [],
        "dhcpv6_options": [],
    }
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.create_lswitch_port(
                lport_name=ids.gw_port,
                lswitch_name=utils.ovn_name(ids.prov_net),
                network_id=ids.prov_net,
                addresses=[f"{gw_mac} {p.router_gw_ip}"],
                external_ids=_port_ext_ids(
                    ids,
                    "",
                    ids.router,
                    const.DEVICE_OWNER_ROUTER_GW,
                    ids.prov_net,
                    f"{p.router_gw_ip}/{prov_net.prefixlen}",
                    MTU_PROVIDER,
                ),
                **no_security,
            )
        )
        txn.add(
            api.create_lswitch_port(
                lport_name=ids.rif_port,
                lswitch_name=utils.ovn_name(ids.ten_net),
                network_id=ids.ten_net,
                addresses=[f"{rif_mac} {p.tenant_gateway}"],
                external_ids=_port_ext_ids(
                    ids,
                    "",
                    ids.router,
                    const.DEVICE_OWNER_ROUTER_INTF,
                    ids.ten_net,
                    f"{p.tenant_gateway}/{ten_net.prefixlen}",
                    MTU_TENANT,
                ),
                **no_security,
            )
        )
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.add_lrouter_port(
                name=gw_lrp,
                lrouter=lr,
                may_exist=True,
                mac=gw_mac,
                networks=[f"{p.router_gw_ip}/{prov_net.prefixlen}"],
                external_ids=_lrp_ext_ids(lr, ids.prov_net, ids.prov_subnet, True),
                options={
                    oc.LRP_OPTIONS_RESIDE_REDIR_CH: "true",
                    oc.OVN_ROUTER_PORT_GW_MTU_OPTION: str(min(MTU_PROVIDER, MTU_TENANT)),
                },
            )
        )
    # what ScheduleNewGatewayCommand leaves: HCG neutron-<router> with the scheduled chassis
    # (priorities from utils.get_chassis_priority(order))
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.ha_chassis_group_with_hc_add(
                lr,
                utils.get_chassis_priority(p.gw_chassis),
                may_exist=True,
                external_ids={
                    oc.OVN_AZ_HINTS_EXT_ID_KEY: "",
                    oc.OVN_ROUTER_ID_EXT_ID_KEY: ids.router,
                },
            )
        )
    hcg_row = api.lookup("HA_Chassis_Group", lr)
    with api.transaction(check_error=True) as txn:
        txn.add(api.db_set("Logical_Router_Port", gw_lrp, ("ha_chassis_group", hcg_row.uuid)))
        txn.add(
            api.set_lrouter_port_in_lswitch_port(
                ids.gw_port,
                gw_lrp,
                is_gw_port=True,
                lsp_address=oc.DEFAULT_ADDR_FOR_LSP_WITH_PEER,
            )
        )
        txn.add(
            api.add_static_route(
                lr,
                ip_prefix="0.0.0.0/0",
                nexthop=p.provider_gateway,
                external_ids={
                    oc.OVN_ROUTER_IS_EXT_GW: "true",
                    oc.OVN_SUBNET_EXT_ID_KEY: ids.prov_subnet,
                    oc.OVN_LRSR_EXT_ID_KEY: "true",
                },
            )
        )
    # the router interface on the tenant subnet (create_router_port)
    with api.transaction(check_error=True) as txn:
        txn.add(
            api.add_lrouter_port(
                name=rif_lrp,
                lrouter=lr,
                may_exist=True,
                mac=rif_mac,
                networks=[f"{p.tenant_gateway}/{ten_net.prefixlen}"],
                external_ids=_lrp_ext_ids(lr, ids.ten_net, ids.ten_subnet, False),
                options={},
            )
        )
        txn.add(
            api.set_lrouter_port_in_lswitch_port(
                ids.rif_port,
                rif_lrp,
                is_gw_port=False,
                lsp_address=oc.DEFAULT_ADDR_FOR_LSP_WITH_PEER,
            )
        )
        txn.add(
            api.add_nat_rule_in_lrouter(
                lr, type="snat", logical_ip=str(ten_net), external_ip=p.router_gw_ip
            )
        )


def _ml2_floating_ip(api: Any, p: Params, ids: NeutronIds) -> None:
    """OVNClient._create_or_update_floatingip() of the VM port's floating IP."""
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.conf.plugins.ml2.drivers.ovn import ovn_conf  # noqa: PLC0415

    lr = utils.ovn_name(ids.router)
    fip_port_mac = _mac(p.name, "fip-port")
    cols: dict[str, Any] = {
        "type": "dnat_and_snat",
        "logical_ip": p.vm_ip,
        "external_ip": p.fip,
        "logical_port": ids.vm_port,
        "external_ids": {
            oc.OVN_FIP_EXT_ID_KEY: ids.fip,
            oc.OVN_REV_NUM_EXT_ID_KEY: "1",
            oc.OVN_FIP_PORT_EXT_ID_KEY: ids.vm_port,
            oc.OVN_ROUTER_NAME_EXT_ID_KEY: lr,
            oc.OVN_FIP_EXT_MAC_KEY: fip_port_mac,
            oc.OVN_FIP_NET_ID: ids.prov_net,
        },
        "options": {"stateless": "true" if ovn_conf.is_stateless_nat_enabled() else "false"},
    }
    if ovn_conf.is_ovn_distributed_floating_ip():
        gw_lrp = utils.ovn_lrouter_port_name(ids.gw_port)
        cols["gateway_port"] = api.lookup("Logical_Router_Port", gw_lrp).uuid
        cols["external_mac"] = fip_port_mac  # (when the VM's LSP is up)
    with api.transaction(check_error=True) as txn:
        txn.add(api.add_nat_rule_in_lrouter(lr, nat_uuid=ids.fip, **cols))
        txn.add(
            api.db_set(
                "Logical_Switch_Port",
                ids.vm_port,
                ("external_ids", {oc.OVN_PORT_FIP_EXT_ID_KEY: p.fip}),
            )
        )


def build_ml2_layer(p: Params, ids: NeutronIds) -> Any:
    """Write what ML2/OVN's OVNClient writes for the Neutron resources; returns the NB API.

    An NB that already has the provider switch is left as it is (a note on stderr).
    """
    from neutron.common.ovn import utils  # noqa: PLC0415

    api = _ml2_nb_api(p)
    # A bare `ovsdb-tool create` DB has no NB_Global row (ovn-northd or `ovn-nbctl init` make
    # it); Neutron's persist_uuid probe needs one.
    if not api.tables["NB_Global"].rows:
        api.db_create("NB_Global").execute(check_error=True)
    prov_ls = utils.ovn_name(ids.prov_net)
    if api.lookup("Logical_Switch", prov_ls, default=None) is not None:
        print(f"# {prov_ls} already in NB: ML2 layer left as is", file=sys.stderr)
        return api
    _ml2_networks(api, p, ids)
    _ml2_subnets(api, p, ids)
    _ml2_vm_port(api, p, ids)
    _ml2_router(api, p, ids)
    _ml2_floating_ip(api, p, ids)
    return api


def _vm_port_dict(p: Params, ids: NeutronIds) -> dict[str, Any]:
    """The VM port as ML2's delete_port_postcommit() passes it to OVNClient.delete_port()."""
    from neutron_lib.api.definitions import portbindings  # noqa: PLC0415

    return {
        "id": ids.vm_port,
        "name": "vm-port",
        "network_id": ids.ten_net,
        "project_id": ids.project,
        "device_id": ids.device,
        "device_owner": "compute:nova",
        "mac_address": _mac(p.name, "vm"),
        "fixed_ips": [{"subnet_id": ids.ten_subnet, "ip_address": p.vm_ip}],
        portbindings.VNIC_TYPE: portbindings.VNIC_NORMAL,
        portbindings.PROFILE: {},
        portbindings.HOST_ID: p.vm_chassis,
        "network": {"id": ids.ten_net, "name": "tenant", "mtu": MTU_TENANT},
    }


def remove_ml2_fip_and_vm_port(p: Params, ids: NeutronIds) -> Any:
    """Delete the floating IP, then the VM port, with ML2/OVN's own OVNClient code.

    DELETE /floatingips/<id>: OVNClient.delete_floatingip()'s transaction, i.e.
    _delete_floatingip() (DeleteNATRuleInLRouterCommand of the dnat_and_snat row, DbRemoveCommand
    of the VM LSP's external_ids:neutron:port_fip, the LB VIP commands: none here) and the QoS
    extension's delete_floatingip() (QoSDelExtIdCommand on the provider switch). The floating
    IP's own Neutron port has no LSP (utils.is_lsp_ignored): its deletion writes nothing. DELETE
    /ports/<vm>: OVNClient.delete_port(), i.e. _delete_port() (DelLSwitchPortCommand, the QoS
    extension's QoSDelCommand per direction, the virtual-parent cleanup). Left out: what both
    do in the Neutron database (revision numbers). Returns the NB API.
    """
    from neutron.common.ovn import constants as oc  # noqa: PLC0415
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.conf.plugins.ml2 import config as ml2_config  # noqa: PLC0415
    from neutron.plugins.ml2.drivers.ovn.mech_driver.ovsdb import (  # noqa: PLC0415
        ovn_client,
    )
    from neutron_lib import context as n_context  # noqa: PLC0415
    from oslo_config import cfg  # noqa: PLC0415

    if not hasattr(cfg.CONF, "ml2"):  # OVNClient's placement extension reads [ml2]
        ml2_config.register_ml2_plugin_opts()
    api = _ml2_nb_api(p)
    if api.lookup("Logical_Switch", utils.ovn_name(ids.prov_net), default=None) is None:
        raise RuntimeError(f"no network {ids.prov_net} in the NB: not built with --name {p.name}?")
    client = ovn_client.OVNClient(api, None)
    ctx = n_context.get_admin_context()

    ovn_fip = api.get_floatingip(ids.fip)
    if ovn_fip:
        lrouter = ovn_fip["external_ids"].get(
            oc.OVN_ROUTER_NAME_EXT_ID_KEY, utils.ovn_name(ids.router)
        )
        fip_net_id = ovn_fip["external_ids"].get(oc.OVN_FIP_NET_ID)
        fip_dict = {"floating_network_id": fip_net_id, "id": ids.fip}
        with api.transaction(check_error=True) as txn:
            client._delete_floatingip(ctx, ovn_fip, lrouter, txn=txn)
            client._qos_driver.delete_floatingip(ctx, txn, fip_dict)
    else:
        print(f"# floating IP {ids.fip} not in NB: left as is", file=sys.stderr)

    if api.get_lswitch_port(ids.vm_port) is not None:
        client._delete_port(ctx, ids.vm_port, None, port_object=_vm_port_dict(p, ids))
    else:
        print(f"# VM port {ids.vm_port} not in NB: left as is", file=sys.stderr)
    return api


# The BGP layer: Neutron's BGP worker and plugin code, unmodified.


class _StubSb:
    """Stands in for neutron.services.bgp.ovn.BgpOvnSbIdl: the BGP full sync only iterates
    sb_api.tables['Chassis_Private'].rows.values() and reads row.name and
    row.external_ids['neutron-bgp-bridges']."""

    def __init__(self, chassis_bridges: dict[str, list[str]]) -> None:
        rows = {
            uuid.uuid5(NS, "chassis/" + name): types.SimpleNamespace(
                name=name, external_ids={"neutron-bgp-bridges": ",".join(bridges)}
            )
            for name, bridges in chassis_bridges.items()
        }
        self.tables = {"Chassis_Private": types.SimpleNamespace(rows=rows)}

    def stop(self) -> None:
        pass


def start_bgp_worker(p: Params, existing_rows_events: bool = True) -> Any:
    """Start Neutron's BGP topology reconciler the way BGPWorker does; returns it with the NB lock.

    With --sb: BGPTopologyReconciler().start() itself (NB and SB IDLs from [ovn]
    ovn_nb_connection/ovn_sb_connection, all its NB and SB row events). Without: the same NB IDL
    and NB row events (ovn.OvnNbIdl(remote, reconciler.nb_events).start(timeout)), and the SB
    replaced by _StubSb (the chassis come from the parameters).

    existing_rows_events=False: the IDLs load the database without row events and the
    reconciler's events are registered afterwards (the IDLs' register_events()), as for a
    worker that is up and synced already: the rows present get no create events (with them, a
    start on a built NB runs the reconcilers again, or fails on them: the events come before
    start() has set reconciler.nb_api).
    """
    from neutron.services.bgp import ovn as bgp_ovn  # noqa: PLC0415
    from neutron.services.bgp import reconciler as bgp_reconciler  # noqa: PLC0415

    # ovsdbapp keeps one connection per API class (the Backend setter sets it only once): reset
    # it so that several runs in one process each talk to their own NB/SB (the neutron server
    # only ever has one)
    bgp_ovn.BgpOvnNbIdl._ovsdb_connection = None
    bgp_ovn.BgpOvnSbIdl._ovsdb_connection = None
    r = bgp_reconciler.BGPTopologyReconciler()
    if p.sb and existing_rows_events:
        r.start()
    else:
        nb_events = r.nb_events if existing_rows_events else None
        r.nb_api = bgp_ovn.OvnNbIdl(p.nb, nb_events).start(timeout=p.timeout)
        if p.sb:
            r.sb_api = bgp_ovn.OvnSbIdl(p.sb, None).start(timeout=p.timeout)
        else:
            r.sb_api = _StubSb({c: p.bgp_bridges.get(c, []) for c in p.chassis})
        r._started.set()
    _wait_until(lambda: bool(r.nb_api.has_lock), p.timeout, "the NB lock bgp_topology_lock")
    if not existing_rows_events:
        r.nb_api.register_events(r.nb_events)
        if p.sb:
            r.sb_api.register_events(r.sb_events)
    return r


def _wait_until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def wait_bgp_events(r: Any, p: Params, seen: Callable[[Any], bool], what: str) -> None:
    """Wait until the BGP IDL has seen the last ML2 write (seen(nb) true; checked under the
    connection's lock, which the IDL holds while it applies an update and queues its row events)
    and its notify thread has run every queued row event."""
    nb = r.nb_api

    def check() -> bool:
        with nb.ovsdb_connection.lock:
            return seen(nb)

    _wait_until(check, p.timeout, f"the BGP IDL to see {what}")
    nb.ovsdb_connection.idl.notify_handler.notifications.join()


def _has_fip_nat(nb: Any, ids: NeutronIds) -> bool:
    from neutron.common.ovn import constants as oc  # noqa: PLC0415

    return any(
        n.external_ids.get(oc.OVN_FIP_EXT_ID_KEY) == ids.fip for n in nb.tables["NAT"].rows.values()
    )


def _has_vm_port(nb: Any, ids: NeutronIds) -> bool:
    return nb.lookup("Logical_Switch_Port", ids.vm_port, default=None) is not None


def leak_tenant_subnet(r: Any, p: Params, ids: NeutronIds) -> None:
    """BGPServicePlugin._leak_subnet() after PUT /subnets/<id> {"subnet": {"leak_routes": true}};
    the nexthop is the router's external gateway IP (Router.get_gateway_ip_for_subnet() in the
    Neutron DB)."""
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.services.bgp import commands as bgp_cmds  # noqa: PLC0415

    bgp_cmds.LeakSubnetCommand(
        r.nb_api, utils.ovn_name(ids.ten_net), p.tenant_cidr, p.router_gw_ip
    ).execute(check_error=True)


# The summary.


def _policy_key(pol: Any) -> tuple[int, str, str, list[str]]:
    return (-pol.priority, pol.match, pol.action, sorted(pol.nexthops))


def dump_nb(nb: Any) -> dict[str, list[dict[str, Any]]]:
    """All routers, switches and HA chassis groups, with the columns that matter to BGP; the
    rows of each set column in a fixed order (by name, or routes by prefix and nexthop, policies
    by descending priority and match, NAT by type and addresses)."""
    t = nb.tables
    out: dict[str, list[dict[str, Any]]] = {"routers": [], "switches": [], "ha_chassis_groups": []}
    for lr in sorted(t["Logical_Router"].rows.values(), key=lambda r: r.name):
        out["routers"].append(
            {
                "name": lr.name,
                "options": dict(lr.options),
                "external_ids": dict(lr.external_ids),
                "ports": [
                    {
                        "name": lrp.name,
                        "mac": lrp.mac,
                        "networks": list(lrp.networks),
                        "peer": lrp.peer[0] if lrp.peer else None,
                        "options": dict(lrp.options),
                        "external_ids": dict(lrp.external_ids),
                        "ha_chassis_group": (
                            lrp.ha_chassis_group[0].name if lrp.ha_chassis_group else None
                        ),
                    }
                    for lrp in sorted(lr.ports, key=lambda r: r.name)
                ],
                "static_routes": [
                    {
                        "ip_prefix": r.ip_prefix,
                        "nexthop": r.nexthop,
                        "output_port": r.output_port[0] if r.output_port else None,
                    }
                    for r in sorted(lr.static_routes, key=lambda r: (r.ip_prefix, r.nexthop))
                ],
                "policies": [
                    {
                        "priority": pol.priority,
                        "match": pol.match,
                        "action": pol.action,
                        "nexthops": list(pol.nexthops),
                        "output_port": (
                            pol.output_port[0].name if getattr(pol, "output_port", None) else None
                        ),
                    }
                    for pol in sorted(lr.policies, key=_policy_key)
                ],
                "nat": [
                    {
                        "type": n.type,
                        "external_ip": n.external_ip,
                        "logical_ip": n.logical_ip,
                        "logical_port": n.logical_port[0] if n.logical_port else None,
                        "external_mac": n.external_mac[0] if n.external_mac else None,
                    }
                    for n in sorted(lr.nat, key=lambda r: (r.type, r.external_ip, r.logical_ip))
                ],
            }
        )
    for ls in sorted(t["Logical_Switch"].rows.values(), key=lambda r: r.name):
        out["switches"].append(
            {
                "name": ls.name,
                "external_ids": dict(ls.external_ids),
                "ports": [
                    {
                        "name": lsp.name,
                        "type": lsp.type,
                        "addresses": list(lsp.addresses),
                        "options": dict(lsp.options),
                    }
                    for lsp in sorted(ls.ports, key=lambda r: r.name)
                ],
            }
        )
    for hcg in sorted(t["HA_Chassis_Group"].rows.values(), key=lambda r: r.name):
        out["ha_chassis_groups"].append(
            {
                "name": hcg.name,
                "ha_chassis": sorted(
                    ((hc.chassis_name, hc.priority) for hc in hcg.ha_chassis),
                    key=lambda x: -x[1],
                ),
            }
        )
    return out


def expected_sb_bindings(p: Params, ids: NeutronIds, nb: Any) -> list[dict[str, str]]:
    """The Port_Binding.chassis a real ovn-controller would set (to emulate with
    `ovn-sbctl lsp-bind PORT CHASSIS`); the VM port only while its LSP exists."""
    from neutron.common.ovn import utils  # noqa: PLC0415
    from neutron.services.bgp import constants as bc  # noqa: PLC0415
    from neutron.services.bgp import helpers  # noqa: PLC0415

    b: list[dict[str, str]] = []
    if _has_vm_port(nb, ids):
        b.append(
            {
                "logical_port": ids.vm_port,
                "chassis": p.vm_chassis,
                "type": "(VIF)",
                "why": "VM port; iface-id on vm chassis",
            }
        )
    b.append(
        {
            "logical_port": "cr-" + utils.ovn_lrouter_port_name(ids.gw_port),
            "chassis": p.gw_chassis[0],
            "type": "chassisredirect",
            "why": f"Neutron router gateway; highest prio in HCG {utils.ovn_name(ids.router)}",
        }
    )
    main = bc.MAIN_ROUTER_NAME
    for ch in p.chassis:
        chr_ = helpers.get_chassis_router_name(ch)
        b.append(
            {
                "logical_port": "cr-" + helpers.get_lrp_name(main, chr_),
                "chassis": ch,
                "type": "chassisredirect",
                "why": f"DGP of {main} with HCG {helpers.get_hcg_name(ch)} (only {ch})",
            }
        )
        lr = nb.lookup("Logical_Router", chr_)
        for lrp in sorted(lr.ports, key=lambda r: r.name):
            b.append(
                {
                    "logical_port": lrp.name,
                    "chassis": ch,
                    "type": "l3gateway",
                    "why": f"port of gateway router {chr_} (options:chassis={ch})",
                }
            )
        for br in p.bgp_bridges.get(ch, []):
            ls = helpers.get_chassis_peer_switch_name(ch, br)
            b.append(
                {
                    "logical_port": helpers.get_lsp_name(ls, chr_),
                    "chassis": ch,
                    "type": "l3gateway",
                    "why": f"router-type LSP peer of {chr_} on {ls}",
                }
            )
    return b


def chassis_ovs_config(p: Params) -> dict[str, dict[str, str]]:
    """Each chassis's OVS Open_vSwitch external_ids as the neutron OVN agent's BGP extension
    leaves them (LocalOVSEvent)."""
    out = {}
    for ch in p.chassis:
        brs = sorted(p.bgp_bridges.get(ch, []))
        mappings = sorted([f"{p.provider_physnet}:br-ex"] + [f"{b}:{b}" for b in brs])
        out[ch] = {
            "neutron-bgp-peer-bridges": ",".join(brs),
            "neutron-bgp-interconnect-bridge": "br-ex",
            "ovn-bridge-mappings": ",".join(mappings),
            "dynamic-routing-port-mapping": ",".join(f"{b}:{b}" for b in brs),
            "SB Chassis_Private external_ids:neutron-bgp-bridges": ",".join(brs),
        }
    return out


def _summary(
    p: Params, ids: NeutronIds, nb: Any, connect_s: float, change_s: float
) -> dict[str, Any]:
    return {
        "params": dataclasses.asdict(p),
        "neutron_ids": dataclasses.asdict(ids),
        "nb": dump_nb(nb),
        "expected_sb_bindings": expected_sb_bindings(p, ids, nb),
        "chassis_ovs_config": chassis_ovs_config(p),
        "timing_s": {"connect": round(connect_s, 3), "build": round(change_s, 3)},
    }


def build(p: Params) -> dict[str, Any]:
    """Build everything; returns the JSON-able summary.

    Mode "events": the BGP worker starts first (a full sync of the NB as it is), then the ML2
    resources are written and the reconciler's NB row events (ProviderSwitchEvent,
    GatewayIPCreatedEvent, FIPChangedEvent) run their commands, then the tenant subnet is leaked.
    Mode "full-sync": the ML2 resources first, then one full sync, then the leak.
    """
    if p.mode not in ("events", "full-sync"):
        raise ValueError(f"unknown mode {p.mode}")
    t0 = time.monotonic()
    p = fill_defaults(p)
    setup_neutron_conf(p)
    ids = NeutronIds.of(p.name)
    r = start_bgp_worker(p)
    t1 = time.monotonic()
    if p.mode == "events":
        r.full_sync()
    ml2 = build_ml2_layer(p, ids)
    wait_bgp_events(r, p, lambda nb: _has_fip_nat(nb, ids), "the floating IP's NAT row")
    if p.mode == "full-sync":
        r.full_sync()
    if p.leak_tenant_subnet:
        leak_tenant_subnet(r, p, ids)
    t2 = time.monotonic()
    summary = _summary(p, ids, r.nb_api, t1 - t0, t2 - t1)
    r.stop()
    ml2.ovsdb_connection.stop()
    return summary


def remove(p: Params) -> dict[str, Any]:
    """Delete the floating IP and the VM port of an NB built with the same parameters, as ML2/OVN
    does, with the BGP worker up and synced already (no full sync, its row events watch the
    changes from now on); returns the summary (timing_s.build is the removal's time).

    The reconciler's FIPChangedEvent (NAT row deleted) reconciles the provider network's
    interconnect port: the floating IP leaves its options:arp_proxy.
    """
    t0 = time.monotonic()
    p = fill_defaults(p)
    setup_neutron_conf(p)
    ids = NeutronIds.of(p.name)
    r = start_bgp_worker(p, existing_rows_events=False)
    t1 = time.monotonic()
    ml2 = remove_ml2_fip_and_vm_port(p, ids)
    wait_bgp_events(
        r,
        p,
        lambda nb: not _has_fip_nat(nb, ids) and not _has_vm_port(nb, ids),
        "the floating IP's NAT row and the VM port go",
    )
    t2 = time.monotonic()
    summary = _summary(p, ids, r.nb_api, t1 - t0, t2 - t1)
    r.stop()
    ml2.ovsdb_connection.stop()
    return summary


def nbctl_cmd() -> list[str]:
    """The ovn-nbctl command: $OVN_NBCTL (split as a shell would) if set, else ovn-nbctl."""
    env = os.environ.get("OVN_NBCTL")
    return shlex.split(env) if env else ["ovn-nbctl"]


def nbctl_show(remote: str) -> str:
    r = subprocess.run(
        [*nbctl_cmd(), f"--db={remote}", "show"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return r.stdout + r.stderr


def print_report(summary: dict[str, Any], remote: str) -> None:
    print("=== ovn-nbctl show ===")
    print(nbctl_show(remote))
    print("=== routers ===")
    for r in summary["nb"]["routers"]:
        print(f"{r['name']}  options={r['options']}")
        for lrp in r["ports"]:
            print(
                f"  LRP {lrp['name']} mac={lrp['mac']} networks={lrp['networks']} "
                f"peer={lrp['peer']} hcg={lrp['ha_chassis_group']} options={lrp['options']}"
            )
        for sr in r["static_routes"]:
            print(f"  route {sr['ip_prefix']} via {sr['nexthop']} port={sr['output_port']}")
        for pol in r["policies"]:
            print(
                f"  policy {pol['priority']} {pol['match']} {pol['action']} {pol['nexthops']} "
                f"output_port={pol['output_port']}"
            )
        for n in r["nat"]:
            print(f"  nat {n}")
    print("=== switches ===")
    for s in summary["nb"]["switches"]:
        print(f"{s['name']}  external_ids={s['external_ids']}")
        for lsp in s["ports"]:
            print(
                f"  LSP {lsp['name']} type={lsp['type'] or '-'} "
                f"addresses={lsp['addresses']} options={lsp['options']}"
            )
    print("=== HA chassis groups ===")
    for h in summary["nb"]["ha_chassis_groups"]:
        print(f"{h['name']}: {h['ha_chassis']}")
    print("=== expected SB Port_Binding.chassis (ovn-sbctl lsp-bind) ===")
    for b in summary["expected_sb_bindings"]:
        print(f"ovn-sbctl lsp-bind {b['logical_port']} {b['chassis']}    # {b['type']}: {b['why']}")
    print("=== per-chassis OVS external_ids (neutron OVN agent BGP ext) ===")
    print(json.dumps(summary["chassis_ovs_config"], indent=2))
    print(f"timing: {summary['timing_s']}")


def parse_bridges(specs: Sequence[str] | None, chassis: Sequence[str]) -> dict[str, list[str]]:
    """--bgp-bridges: 'br1,br2' for every chassis, 'CH=br1,br2' for one; default br-bgp."""
    default: list[str] = []
    per: dict[str, list[str]] = {}
    for s in specs or ["br-bgp"]:
        if "=" in s:
            ch, brs = s.split("=", 1)
            per[ch] = [b for b in brs.split(",") if b]
        else:
            default = [b for b in s.split(",") if b]
    return {ch: per.get(ch, default) for ch in chassis}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--nb", required=True, help="NB remote, e.g. unix:/x.sock")
    ap.add_argument(
        "--sb", default="", help="optional SB remote: read Chassis_Private from it, not the stub"
    )
    ap.add_argument("--chassis", action="append", required=True, help="chassis name (repeat)")
    ap.add_argument(
        "--bgp-bridges",
        action="append",
        help="'br1,br2' for all chassis or 'CH=br1,br2' (repeat); default br-bgp",
    )
    ap.add_argument("--provider-physnet", default="physnet1")
    ap.add_argument("--provider-cidr", default="172.24.4.0/24")
    ap.add_argument("--provider-gateway", default="172.24.4.1")
    ap.add_argument("--router-gw-ip", default="")
    ap.add_argument("--tenant-cidr", default="10.0.0.0/24")
    ap.add_argument("--tenant-gateway", default="")
    ap.add_argument("--vm-ip", default="")
    ap.add_argument("--vm-chassis", default="")
    ap.add_argument("--fip", default="")
    ap.add_argument(
        "--gw-chassis", action="append", help="router gateway chassis, highest priority first"
    )
    ap.add_argument(
        "--no-leak", action="store_true", help="do not leak the tenant subnet into bgp-lr-main"
    )
    ap.add_argument("--distributed-fip", action="store_true")
    ap.add_argument("--name", default="bgp-lab")
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--mode", choices=("events", "full-sync"), default="events")
    ap.add_argument(
        "--remove",
        action="store_true",
        help="on an NB built with the same --name and parameters: delete the floating IP and the "
        "VM port as ML2/OVN does, and let the BGP worker's row events follow",
    )
    ap.add_argument(
        "--json", help='write the summary JSON to this file ("-" = stdout, then nothing else)'
    )
    a = ap.parse_args(argv)
    p = Params(
        nb=a.nb,
        sb=a.sb,
        chassis=a.chassis,
        bgp_bridges=parse_bridges(a.bgp_bridges, a.chassis),
        provider_physnet=a.provider_physnet,
        provider_cidr=a.provider_cidr,
        provider_gateway=a.provider_gateway,
        router_gw_ip=a.router_gw_ip,
        tenant_cidr=a.tenant_cidr,
        tenant_gateway=a.tenant_gateway,
        vm_ip=a.vm_ip,
        vm_chassis=a.vm_chassis,
        fip=a.fip,
        gw_chassis=a.gw_chassis or [],
        leak_tenant_subnet=not a.no_leak,
        distributed_fip=a.distributed_fip,
        name=a.name,
        timeout=a.timeout,
        mode=a.mode,
    )
    summary = remove(p) if a.remove else build(p)
    if a.json == "-":
        json.dump(summary, sys.stdout, indent=2, sort_keys=True)
        print()
        return 0
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2, sort_keys=True)
    print_report(summary, a.nb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
