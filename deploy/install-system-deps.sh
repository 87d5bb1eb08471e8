#!/usr/bin/env bash
# Installs what lakecdc needs from the OS on Debian/Ubuntu: a Java runtime for Spark, Python's venv
# module, and the MariaDB server the MySQL-source tests start privately (never as a system service),
# with openssl to make their TLS certificates, and docker-compose to validate docker-compose.yml.
# Runs apt-get only when something is missing, and only as root (or via sudo).
set -euo pipefail

need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
{ command -v mariadbd || [ -x /usr/sbin/mariadbd ]; } >/dev/null 2>&1 || need+=(mariadb-server)
command -v openssl >/dev/null 2>&1 || need+=(openssl)  # the MySQL TLS tests make their certificates
# the compose test validates docker-compose.yml (`docker-compose config`; no Docker engine needed)
{ command -v docker-compose || docker compose version; } >/dev/null 2>&1 || need+=(docker-compose)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "lakecdc needs: ${need[*]} — install them (apt-get install ${need[*]}) and run again." >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "lakecdc needs: a Java 17+ runtime, Python's venv module and (for the tests) mariadb-server;" \
    "install them with your package manager." >&2
  exit 1
fi
echo "installing ${need[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# (On machines with systemd the package also starts a system MariaDB service; lakecdc's tests do not use it.)
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
