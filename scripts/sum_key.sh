# shellcheck shell=sh
# Sourced by bin/shoal-mcp and bin/shoal-kernel, which key what they keep in a file by what one
# cksum printed (each program run costs a start ~5 ms: issue 33). `sum_key SUMS` sets two hashes
# of its numbers: sum_id names the file, sum_check (with sum_words, how many words SUMS holds)
# stands for the whole key inside it, which the shell's read took a byte at a time (~3 ms a start).
sum_key() {
  sum_id=0
  sum_check=0
  sum_words=0
  set -f
  for sum_word in $1; do
    sum_words=$((sum_words + 1))
    case $sum_word in
    *[!0-9]* | '') ;;
    *)
      sum_id=$(((sum_id * 31 + sum_word) % 4294967291))
      sum_check=$(((sum_check * 131 + sum_word) % 4294967279))
      ;;
    esac
  done
  set +f
}
