_pk_share_consumer_perf_test_completion() {
    local IFS=$'\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _PK_SHARE_CONSUMER_PERF_TEST_COMPLETE=bash_complete $1)

    for completion in $response; do
        IFS=',' read type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

_pk_share_consumer_perf_test_completion_setup() {
    complete -o nosort -F _pk_share_consumer_perf_test_completion pk-share-consumer-perf-test
}

_pk_share_consumer_perf_test_completion_setup;
