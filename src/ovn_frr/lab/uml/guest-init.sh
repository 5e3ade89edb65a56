#!/bin/sh
# PID 1 of the kernel tier's User-Mode Linux guest (ovn_frr.lab.uml). The root file system is
# the host's (or the Debian 13 root's) / through hostfs, read-only; every path a scenario writes
# is a guest-local tmpfs, except $UML_DIR/out, where the results go back to the host.
# Kernel command line words KEY=VALUE arrive here as environment: UML_DIR, UML_RO (the host
# folder the command runs in, made visible again above the guest's tmpfs mounts).
export PATH=/usr/lib/frr:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
for d in /run /tmp /var/tmp /var/log /var/lib/openvswitch /etc/openvswitch /var/lib/ovn \
         /etc/ovn /var/lib/frr; do
    [ -d "$d" ] && mount -t tmpfs tmpfs "$d"
done
# a host folder through hostfs: "-o hostfs=PATH" from 6.x's mount API on (6.12), "-o PATH"
# before (6.1)
hostfs() {  # hostfs PATH [ro]
    mkdir -p "$1"
    mount -t hostfs -o "${2:+$2,}hostfs=$1" hostfs "$1" 2>/dev/null ||
        mount -t hostfs -o "${2:+$2,}$1" hostfs "$1"
}
# the host folders the scenario needs (UML_DIR itself read-only, its out/ read-write)
for d in "$UML_DIR" "$UML_RO"; do
    hostfs "$d" ro
done
hostfs "$UML_DIR/out"
OUT=$UML_DIR/out
exec >"$OUT/console.txt" 2>&1
echo "guest: kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
# no /lib/modules on the root: modprobe -d a tree whose lib/modules/<ver> is the UML modules
echo "$UML_DIR/modprobe.sh" > /proc/sys/kernel/modprobe
for m in vrf dummy veth vxlan bridge tun; do
    "$UML_DIR/modprobe.sh" "$m" || echo "guest: modprobe $m failed"
done
ip link set lo up
# the watchdog: the scenario's deadline, then power off whatever runs
( sleep "${UML_DEADLINE:-600}"; echo "guest: deadline passed, powering off"; \
  echo o > /proc/sysrq-trigger ) &
sh "$UML_DIR/command.sh" >"$OUT/output.txt" 2>&1
echo $? > "$OUT/rc"
echo "guest: command exited $(cat "$OUT/rc"), up $(cut -d' ' -f1 /proc/uptime) s"
sync
echo o > /proc/sysrq-trigger
sleep 30
