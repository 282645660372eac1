_pk_verifiable_share_consumer_completion() {
    local IFS=$'\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _PK_VERIFIABLE_SHARE_CONSUMER_COMPLETE=bash_complete $1)

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

_pk_verifiable_share_consumer_completion_setup() {
    complete -o nosort -F _pk_verifiable_share_consumer_completion pk-verifiable-share-consumer
}

_pk_verifiable_share_consumer_completion_setup;
