function _pk_verifiable_share_consumer_completion;
    set -l response (env _PK_VERIFIABLE_SHARE_CONSUMER_COMPLETE=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) pk-verifiable-share-consumer);

    for completion in $response;
        set -l metadata (string split "," $completion);

        if test $metadata[1] = "dir";
            __fish_complete_directories $metadata[2];
        else if test $metadata[1] = "file";
            __fish_complete_path $metadata[2];
        else if test $metadata[1] = "plain";
            echo $metadata[2];
        end;
    end;
end;

complete --no-files --command pk-verifiable-share-consumer --arguments "(_pk_verifiable_share_consumer_completion)";
