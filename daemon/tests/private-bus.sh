# Sourced by the daemon's host tests: a private D-Bus daemon standing in
# for the system bus, so that mock-systemd can own org.freedesktop.systemd1.
# private_bus_start DIR: listens on DIR/bus, sets BUSPID and
# DBUS_SYSTEM_BUS_ADDRESS; fails (DIR/bus.err has why) if it did not start.
private_bus_start() {
	cat > "$1/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$1/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
	dbus-daemon --config-file="$1/bus.conf" --nofork --nopidfile 2>"$1/bus.err" &
	BUSPID=$!
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$1/bus
	local i=0
	while [ $i -lt 100 ]; do [ -S "$1/bus" ] && return 0; sleep 0.1; i=$((i + 1)); done
	return 1
}
