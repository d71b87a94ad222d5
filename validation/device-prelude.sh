# Sourced by the device recipes: the carried toolchain (.tc) unpacked to /tmp/tc and the environment a
# recipe's mmacts runs need. Sets: MMACTS_TOOLCHAIN_DIR, PYTHONPATH, PYTHONUNBUFFERED, MMACTS_GIT_SHA.
mkdir -p /tmp/tc
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1
MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
export MMACTS_GIT_SHA
