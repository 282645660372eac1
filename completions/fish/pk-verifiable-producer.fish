function _pk_verifiable_producer_completion;
    set -l response (env _PK_VERIFIABLE_PRODUCER_COMPLETE=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) pk-verifiable-producer);

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

complete --no-files --command pk-verifiable-producer --arguments "(_pk_verifiable_producer_completion)";
