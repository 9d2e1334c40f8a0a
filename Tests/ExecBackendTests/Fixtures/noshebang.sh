echo "no shebang here"
