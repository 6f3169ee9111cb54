# Sourced by run.sh and test.sh: `phase "what it does" command...` prints one line when a
# long step starts and its duration when it ends, so a first run is not minutes of silence.
phase() {
  local what=$1
  shift
  local started
  started=$(date +%s)
  echo "==> $what"
  "$@"
  echo "    $what: $(( $(date +%s) - started )) s"
}
